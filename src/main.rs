#[cfg(feature = "ssr")]
fn main() -> std::process::ExitCode {
    rivet::server::cli::main()
}

// The WASM bundle starts from `rivet::hydrate`; the binary only exists with `ssr`.
#[cfg(not(feature = "ssr"))]
fn main() {}
