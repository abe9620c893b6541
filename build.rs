//! Link-time settings of the `atomic` binary.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        // Relative relocations packed (DT_RELR, glibc 2.36+): the loader reads a few KB at
        // start-up instead of 1.2 MB of `.rela.dyn`, which every process kept resident
        // (BENCHMARKS.md, "Memory of durable runs"). A linker that does not know the
        // option ignores it, and one that knows it adds the packed form only when the C
        // library supports it.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    hot_code_first();
}

/// Has the linker place the functions everyday commands run (`link/hot-code.txt`, written
/// by `link/order-hot-code.py`) together at the start of the code: a run then maps ~3 MB of
/// the binary's code instead of ~14 MB spread over it (BENCHMARKS.md, "Hot code first").
/// Only for release builds linked by rustc's own lld, the default for x86-64 Linux; a
/// linker chosen by the user may not know the option. Names the build does not have are
/// passed over without a warning, so a stale list costs memory, never the build.
fn hot_code_first() {
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-code.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let rustflags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = !var("RUSTC_LINKER").is_empty()
        || ["linker", "link-self-contained", "fuse-ld"]
            .iter()
            .any(|flag| rustflags.contains(flag));
    if var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && !own_linker
        && order.is_file()
        && ships_its_own_lld(&var("RUSTC"))
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether `rustc` has its own lld, which it links x86-64 Linux with by default (rustup's
/// toolchains since 1.90); a toolchain built without it (some distributions') links with
/// the system's `cc` and `ld`, which may not know the ordering option.
fn ships_its_own_lld(rustc: &str) -> bool {
    let rustc = if rustc.is_empty() { "rustc" } else { rustc };
    let Ok(output) = std::process::Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
    else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&output.stdout);
    Path::new(sysroot.trim())
        .join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld/ld.lld")
        .is_file()
}
