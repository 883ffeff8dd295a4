//! Test support for herdr-link's crates, one copy for all of them (instead of files included
//! by path into each test binary).
//!
//! - [`world`]: the built library through its C ABI, and fake-Herdr worlds for in-process tests;
//! - [`mcp`]: fake-Herdr worlds for child processes, and `herdr-link mcp` spoken to in raw lines;
//! - [`signals`]: children that start with default signal dispositions whatever the test
//!   process inherited (a background shell ignores SIGINT and SIGQUIT);
//! - [`rng`]: the seeded generator of the randomised tests;
//! - [`guard_corpus`], [`guard_generate`], [`guard_oracle`]: the Bash guard's corpus, command
//!   generator and bash oracle.

// Test helpers, not an API: `Abi::take` takes the pointers the library under test returns,
// `Rng::next` is the generator's own name, and the oracle has no meaningful default.
#![allow(
    clippy::not_unsafe_ptr_arg_deref,
    clippy::should_implement_trait,
    clippy::new_without_default
)]

pub mod guard_corpus;
pub mod guard_generate;
pub mod guard_oracle;
pub mod mcp;
pub mod rng;
pub mod signals;
pub mod world;

/// The target directory the running test or benchmark was built into (`target/<profile>`):
/// its executable is `target/<profile>/deps/<name>-<hash>`.
pub fn target_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(std::path::Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}
