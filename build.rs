//! Link-time settings of the `atomic` binary.

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
}
