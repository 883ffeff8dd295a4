//! Takes the Active Contract from PROTOCOL.md §3 (its one hand-maintained copy) so the
//! library never carries a second copy that could drift.
use std::{env, fs, path::PathBuf};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let protocol = manifest.join("PROTOCOL.md");
    println!("cargo:rerun-if-changed={}", protocol.display());
    let text = fs::read_to_string(&protocol)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", protocol.display()));
    let contract = contract_block(&text)
        .unwrap_or_else(|| panic!("PROTOCOL.md has no ```text block after the `## 3.` heading"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("contract.txt");
    fs::write(out, contract).expect("write contract.txt");
}

include!("src/contract_block.rs");
