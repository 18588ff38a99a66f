//! The library's normal build depends on std only: kase without its `model`
//! feature, and no kase runtime. Only its tests (through
//! `[dev-dependencies]`) turn `model` on.
//!
//! Asks cargo itself, with `cargo tree`, which resolves features exactly as
//! `cargo build -p facade-lib` does (resolver 2 does not unify the
//! dev-dependency's features into a normal build). It reads the lock file
//! and compiles nothing, so it takes a fraction of a second.

use std::process::Command;

/// `cargo tree` for this package over the given dependency kinds: one line
/// per package, `<name> <version> [(<path>)] <features, comma-separated>`.
fn tree(edges: &str) -> String {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--manifest-path", manifest])
        .args(["-p", "facade-lib", "-e", edges])
        .args(["--prefix", "none", "--format", "{p} [{f}]"])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo tree prints UTF-8")
}

/// The package names in a `tree` listing, with their features.
fn packages(tree: &str) -> Vec<(String, String)> {
    tree.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let name = l.split_whitespace().next().unwrap_or_default().to_string();
            let features = l
                .rsplit_once('[')
                .and_then(|(_, f)| f.strip_suffix(']'))
                .unwrap_or_default()
                .to_string();
            (name, features)
        })
        .collect()
}

#[test]
fn a_normal_build_uses_kase_without_model_and_no_runtime() {
    let normal = tree("normal,build");
    let packages = packages(&normal);
    let names: Vec<&str> = packages.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["facade-lib", "kase-check"],
        "a normal build of facade-lib should need only the kase facade:\n{normal}"
    );
    assert_eq!(
        packages[1].1, "",
        "kase should have no features (no `model`) in a normal build:\n{normal}"
    );
}

/// The control: with dev-dependencies, the same query does see `model` and
/// the runtime (so the test above would notice them).
#[test]
fn the_tests_use_kase_with_model_and_its_runtime() {
    let all = tree("normal,build,dev");
    let packages = packages(&all);
    let kase = packages
        .iter()
        .find(|(n, _)| n == "kase-check")
        .expect("kase is a dependency");
    assert!(
        kase.1.split(',').any(|f| f == "model"),
        "the tests should build kase with `model`:\n{all}"
    );
    assert!(
        packages.iter().any(|(n, _)| n == "kase-rt"),
        "the tests should build the kase runtime:\n{all}"
    );
}
