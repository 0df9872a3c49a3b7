//! The start of every exchange: `initialize`, then `initialized`; and the login check a turn
//! makes before its thread (and `readAccount` reports by the same rule).

use super::{Exchange, Input, Output, Owner, Stop};
use crate::account;
use crate::discovery::env::{Env, Os};
use crate::options::target::Target;
use crate::protocol::{method, AccountRead, Initialize};
use serde_json::Value;

/// What the server said of itself.
pub struct Hello {
    pub user_agent: String,
    /// The CLI version in the user agent (`0.171.0`), where it has one.
    pub codex_version: Option<String>,
}

/// `initialize` and `initialized`. `experimental`: a request of the run needs the protocol's
/// experimental surface (plan mode's `collaborationMode`); otherwise it is not asked for.
pub async fn handshake<R: Input, W: Output, O: Owner>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut O,
    experimental: bool,
) -> Result<Hello, Stop> {
    let init = exchange.call(owner, &Initialize::ours().with_experimental_api(experimental)).await?;
    let codex_version = crate::protocol::version_from_user_agent(&init.user_agent);
    exchange.codex_version = codex_version.clone();
    // Its loss shows in the next request, which cannot be written either.
    let _ = exchange.wire.notify(method::INITIALIZED).await;
    Ok(Hello { user_agent: init.user_agent, codex_version })
}

/// How `account/read` answered.
pub enum Login {
    /// Its report (`{account, requiresOpenaiAuth}`), and whether the child can authenticate:
    /// an account, an API key in its environment, or no login needed.
    Report { report: Value, ready: bool },
    /// A Codex without `account/read`, or one that could not say: its error.
    Unknown(crate::protocol::RpcError),
}

/// Asks `account/read` and decides, by the rule of [`account::login_missing`], whether the child
/// for `target` can authenticate.
pub async fn login<R: Input, W: Output, O: Owner>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut O,
    target: &Target,
) -> Result<Login, Stop> {
    let report = match exchange.ask(owner, &AccountRead {}).await? {
        Ok(report) => report,
        Err(error) => return Ok(Login::Unknown(error)),
    };
    let ready = !account::login_missing(&report, &child_env(target));
    Ok(Login::Report { report, ready })
}

/// The environment the child runs with, as far as a login goes.
pub fn child_env(target: &Target) -> Env {
    match target.locus {
        None => Env::from_process(&target.env, Os::current()),
        // Inside WSL only what `env` gives crosses into the distribution.
        Some(_) => Env::from_pairs(target.env.clone(), Os::Unix),
    }
}
