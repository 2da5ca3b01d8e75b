//! The `assay` command: see the library's documentation for what it does
//! and its exit codes.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(assay::main_with(std::env::args_os()))
}
