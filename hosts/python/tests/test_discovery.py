"""Finding the library: $HERDR_LINK_LIB, then next to the package, then the cargo target dir."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import herdr_link
from herdr_link import _native

import support

NAME = _native.library_filename()


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"not really a library")
    return path


def make_repo(root):
    """A directory that looks like a herdr-link checkout."""
    os.makedirs(os.path.join(root, "include"), exist_ok=True)
    with open(os.path.join(root, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "herdr-link"\n')
    with open(os.path.join(root, "include", "herdr_link.h"), "w") as f:
        f.write("/* header */\n")
    return root


class DiscoveryOrder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="herdr-link-py-disc-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.pkg = os.path.join(self.tmp, "site", "herdr_link")
        os.makedirs(self.pkg)
        self.cwd = os.path.join(self.tmp, "elsewhere")
        os.makedirs(self.cwd)

    def find(self, environ):
        return herdr_link.find_library(environ=environ, package_dir=self.pkg, cwd=self.cwd)

    def test_library_file_names(self):
        self.assertEqual(_native.library_filename("linux"), "libherdr_link.so")
        self.assertEqual(_native.library_filename("darwin"), "libherdr_link.dylib")
        self.assertEqual(_native.library_filename("win32"), "herdr_link.dll")

    def test_env_var_wins_over_everything(self):
        explicit = touch(os.path.join(self.tmp, "custom", "my-lib.so"))
        touch(os.path.join(self.pkg, NAME))
        cargo = os.path.join(self.tmp, "cargo-target")
        touch(os.path.join(cargo, "release", NAME))
        env = {"HERDR_LINK_LIB": explicit, "CARGO_TARGET_DIR": cargo}
        self.assertEqual(self.find(env), explicit)
        self.assertEqual(
            herdr_link.candidate_paths(env, package_dir=self.pkg, cwd=self.cwd), [explicit]
        )

    def test_env_var_naming_nothing_is_an_error_without_fallback(self):
        touch(os.path.join(self.pkg, NAME))
        missing = os.path.join(self.tmp, "nope", NAME)
        with self.assertRaises(herdr_link.LibraryNotFoundError) as cm:
            self.find({"HERDR_LINK_LIB": missing})
        self.assertIn(missing, str(cm.exception))
        self.assertEqual(cm.exception.tried, [missing])
        self.assertIsInstance(cm.exception, OSError)

    def test_relative_env_var_is_relative_to_cwd(self):
        lib = touch(os.path.join(self.cwd, "lib", NAME))
        self.assertEqual(self.find({"HERDR_LINK_LIB": os.path.join("lib", NAME)}), lib)

    def test_empty_env_var_is_unset(self):
        beside = touch(os.path.join(self.pkg, NAME))
        self.assertEqual(self.find({"HERDR_LINK_LIB": ""}), beside)

    def test_bundled_library_next_to_the_package_before_cargo(self):
        bundled = touch(os.path.join(self.pkg, _native.bundled_filename()))
        cargo = os.path.join(self.tmp, "cargo-target")
        touch(os.path.join(cargo, "release", NAME))
        self.assertEqual(self.find({"CARGO_TARGET_DIR": cargo}), bundled)
        # A library copied beside the package by hand wins over the bundled one.
        beside = touch(os.path.join(self.pkg, NAME))
        self.assertEqual(self.find({"CARGO_TARGET_DIR": cargo}), beside)

    def test_next_to_the_package_before_cargo(self):
        beside = touch(os.path.join(self.pkg, NAME))
        cargo = os.path.join(self.tmp, "cargo-target")
        touch(os.path.join(cargo, "release", NAME))
        self.assertEqual(self.find({"CARGO_TARGET_DIR": cargo}), beside)

    def test_cargo_target_dir_release_then_debug(self):
        cargo = os.path.join(self.tmp, "cargo-target")
        debug = touch(os.path.join(cargo, "debug", NAME))
        self.assertEqual(self.find({"CARGO_TARGET_DIR": cargo}), debug)
        release = touch(os.path.join(cargo, "release", NAME))
        self.assertEqual(self.find({"CARGO_TARGET_DIR": cargo}), release)

    def test_checkout_target_dir_above_the_package(self):
        repo = make_repo(os.path.join(self.tmp, "checkout"))
        pkg = os.path.join(repo, "hosts", "python", "src", "herdr_link")
        os.makedirs(pkg)
        debug = touch(os.path.join(repo, "target", "debug", NAME))
        found = herdr_link.find_library(environ={}, package_dir=pkg, cwd=self.cwd)
        self.assertEqual(found, debug)
        release = touch(os.path.join(repo, "target", "release", NAME))
        found = herdr_link.find_library(environ={}, package_dir=pkg, cwd=self.cwd)
        self.assertEqual(found, release)

    def test_checkout_target_dir_above_the_working_directory(self):
        repo = make_repo(os.path.join(self.tmp, "checkout"))
        cwd = os.path.join(repo, "some", "subdir")
        os.makedirs(cwd)
        lib = touch(os.path.join(repo, "target", "release", NAME))
        self.assertEqual(herdr_link.find_library(environ={}, package_dir=self.pkg, cwd=cwd), lib)

    def test_cargo_target_dir_before_the_checkout(self):
        repo = make_repo(os.path.join(self.tmp, "checkout"))
        touch(os.path.join(repo, "target", "release", NAME))
        cargo = os.path.join(self.tmp, "cargo-target")
        debug = touch(os.path.join(cargo, "debug", NAME))
        found = herdr_link.find_library(
            environ={"CARGO_TARGET_DIR": cargo}, package_dir=self.pkg, cwd=repo
        )
        self.assertEqual(found, debug)

    def test_a_plain_directory_is_not_a_checkout(self):
        # target/ under a directory without Cargo.toml + include/herdr_link.h is ignored.
        touch(os.path.join(self.cwd, "target", "release", NAME))
        with self.assertRaises(herdr_link.LibraryNotFoundError):
            self.find({})

    def test_not_found_lists_every_path_tried(self):
        cargo = os.path.join(self.tmp, "cargo-target")
        with self.assertRaises(herdr_link.LibraryNotFoundError) as cm:
            self.find({"CARGO_TARGET_DIR": cargo})
        self.assertEqual(
            cm.exception.tried,
            [
                os.path.join(self.pkg, NAME),
                os.path.join(self.pkg, _native.bundled_filename()),
                os.path.join(cargo, "release", NAME),
                os.path.join(cargo, "debug", NAME),
            ],
        )
        for p in cm.exception.tried:
            self.assertIn(p, str(cm.exception))

    def test_link_with_a_missing_path(self):
        with self.assertRaises(herdr_link.LibraryNotFoundError):
            herdr_link.Link(os.path.join(self.tmp, "missing", NAME))

    def test_link_with_a_file_that_is_not_a_library(self):
        bogus = touch(os.path.join(self.tmp, "bogus", NAME))
        with self.assertRaises(herdr_link.WrongLibraryError) as cm:
            herdr_link.Link(bogus)
        self.assertEqual(cm.exception.path, bogus)
        self.assertIn(f"{bogus} is not a loadable herdr-link library", str(cm.exception))
        empty = os.path.join(self.tmp, "empty", NAME)
        os.makedirs(os.path.dirname(empty))
        open(empty, "wb").close()
        with self.assertRaises(herdr_link.WrongLibraryError) as cm:
            herdr_link.Link(empty)
        self.assertIn(empty, str(cm.exception))

    def test_link_with_another_shared_library(self):
        # A real, loadable shared library that is not herdr-link: no bare AttributeError.
        import _ctypes

        other = _ctypes.__file__
        with self.assertRaises(herdr_link.WrongLibraryError) as cm:
            herdr_link.Link(other)
        message = str(cm.exception)
        self.assertIn(f"{other} is not the herdr-link library", message)
        self.assertIn("hl_tool_call", message)
        self.assertIsInstance(cm.exception, OSError)

    def test_library_of_another_version(self):
        with self.assertRaises(herdr_link.WrongLibraryError) as cm:
            _native.Native(support.LIB_PATH, expected_version="9.9.9")
        message = str(cm.exception)
        self.assertIn(support.LIB_PATH, message)
        self.assertIn(f"is herdr-link {support.crate_version()}", message)
        self.assertIn("9.9.9", message)


def run_python(code, env, cwd):
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


class RealLoading(unittest.TestCase):
    """The real library, loaded in a fresh interpreter through each discovery step."""

    PROBE = "import herdr_link, sys; l = herdr_link.Link(); print(l.path); print(l.version())"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="herdr-link-py-load-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("HERDR_LINK_LIB", "CARGO_TARGET_DIR")
        }

    def test_import_does_not_load_the_library(self):
        env = dict(self.env, HERDR_LINK_LIB=os.path.join(self.tmp, "missing.so"))
        out = run_python("import herdr_link; print(herdr_link.__version__)", env, self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        out = run_python("import herdr_link; herdr_link.Link()", env, self.tmp)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("LibraryNotFoundError", out.stderr)

    def test_env_var(self):
        env = dict(self.env, HERDR_LINK_LIB=support.LIB_PATH)
        out = run_python(self.PROBE, env, self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), [support.LIB_PATH, support.crate_version()])

    def test_next_to_the_package(self):
        # A copy of the installed package with the library copied beside it.
        pkg = os.path.join(self.tmp, "site", "herdr_link")
        shutil.copytree(os.path.dirname(herdr_link.__file__), pkg)
        shutil.copy(support.LIB_PATH, os.path.join(pkg, NAME))
        path = [os.path.dirname(pkg)] + [p for p in [self.env.get("PYTHONPATH")] if p]
        env = dict(self.env, PYTHONPATH=os.pathsep.join(path))
        out = run_python(self.PROBE, env, self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split()[0], os.path.join(pkg, NAME))

    def test_bundled_library_needs_no_environment(self):
        """`pip install ./hosts/python` compiles the library into the package: no variable."""
        if os.environ.get("HERDR_LINK_PY_EXPECT_INSTALLED") != "1":
            self.skipTest("runs against the installed wheel (hosts/python/run-tests.sh)")
        bundled = os.path.join(os.path.dirname(herdr_link.__file__), _native.bundled_filename())
        self.assertTrue(os.path.isfile(bundled), f"the wheel did not bundle {bundled}")
        out = run_python(self.PROBE, self.env, self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), [bundled, support.crate_version()])

    def test_cargo_target_dir(self):
        # A copy of the installed package without the bundled library (which would come first).
        pkg = os.path.join(self.tmp, "site", "herdr_link")
        shutil.copytree(
            os.path.dirname(herdr_link.__file__),
            pkg,
            ignore=shutil.ignore_patterns("libherdr_link*"),
        )
        cargo = os.path.join(self.tmp, "cargo")
        os.makedirs(os.path.join(cargo, "release"))
        shutil.copy(support.LIB_PATH, os.path.join(cargo, "release", NAME))
        path = [os.path.dirname(pkg)] + [p for p in [self.env.get("PYTHONPATH")] if p]
        env = dict(self.env, CARGO_TARGET_DIR=cargo, PYTHONPATH=os.pathsep.join(path))
        out = run_python(self.PROBE, env, self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split()[0], os.path.join(cargo, "release", NAME))


if __name__ == "__main__":
    unittest.main()
