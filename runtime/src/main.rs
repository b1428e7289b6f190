//! The `basalt` binary: sets the global allocator, then hands over to
//! [`basalt_runtime::cli`].

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    basalt_runtime::cli::main()
}
