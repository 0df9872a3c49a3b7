//! `rennet-codex-guard <host marker>`: started by the addon with a pipe on stdin; see
//! `rennet_codex::process::guard` for what it does and why.

fn main() {
    let Some(host) = std::env::args().nth(1).filter(|h| !h.is_empty()) else {
        eprintln!("usage: rennet-codex-guard <host marker> (started by @rennet/codex, not by hand)");
        std::process::exit(2);
    };
    rennet_codex::process::guard::detach();
    rennet_codex::process::guard::serve(&mut std::io::stdin().lock(), &host);
}
