//! The `vcctl` binary: Volcano's command line (`vcctl job …`, `vcctl queue …`), and, started
//! through a link named `vsub`, `vjobs`, `vqueues`, `vcancel`, `vsuspend` or `vresume`, that
//! shorthand. Hands over to [`basalt_runtime::cli::vcctl`].

use std::process::ExitCode;

fn main() -> ExitCode {
    basalt_runtime::cli::vcctl::main()
}
