//! `rennet-codex-guard`: the host-death guard of @rennet/codex. The addon starts it while the
//! host has children of the package; when the host dies without ending them, the guard does.
//! What the host tells it, and why, is in `rennet_codex::process::guard`; what it does is here.

// The guard does its work on Unix only (Windows ends a host's children through Job Objects):
// the platform is chosen here, once.
#[cfg(unix)]
mod detach;
#[cfg(unix)]
#[path = "unix.rs"]
mod run;
#[cfg(not(unix))]
#[path = "elsewhere.rs"]
mod run;
#[cfg(unix)]
mod serve;

fn main() {
    std::process::exit(run::main(std::env::args().skip(1).collect()));
}
