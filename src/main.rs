//! The `rivet` binary: the server and its command line. It exists only with
//! the `ssr` feature (`required-features` in Cargo.toml); the WASM bundle
//! starts from `rivet::hydrate`.

fn main() -> std::process::ExitCode {
    rivet::server::cli::main()
}
