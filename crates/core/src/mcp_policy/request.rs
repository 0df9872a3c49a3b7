//! The child an MCP policy request is for: its launcher as given, else the Codex resolved exactly
//! as a turn resolves it ([`crate::resolve`]). The request itself is checked in
//! [`crate::options::mcp`].

use crate::failure::Failure;
use crate::options::mcp::PolicyRequest;
use crate::process::Launch;
use crate::resolve;
use std::path::PathBuf;

/// The launch of the child `request`'s policy is for.
pub async fn launch(request: &PolicyRequest) -> Result<Launch, Failure> {
    if let Some(argv) = &request.launcher {
        let mut launch = Launch::new(&argv[0], &argv[1..]);
        launch.cwd = PathBuf::from(&request.target.cwd);
        launch.add_env(request.target.env.clone());
        return Ok(launch);
    }
    let discovery = resolve::discovery_for(&request.target);
    Ok(resolve::resolve(&request.target, discovery.as_ref()).await?.launch)
}
