//! Starting a child on Windows so that it inherits exactly its three stdio handles, and nothing
//! else of the host's.
//!
//! Windows gives a new process every inheritable handle of its parent when the parent asks for
//! inheritance at all, which it must for the child's stdio pipes. Rust's standard library (and
//! so tokio) does that with no list of handles; libuv, which starts an app's own children (an
//! Electron app runs `git` and shells all the time), makes each of its child's pipe ends
//! inheritable while it sets that child up. A `codex app-server` started at that moment takes
//! the app's pipe along and keeps it for as long as it runs: the app's child exits, and the app
//! waits for an end-of-file that only comes when the turn ends. `__test__/lifecycle/handles.test.ts`
//! shows it under Wine: before this file, 14 of 671 such children in 10 rounds of 4 turns
//! closed only once the turns ended; with it, none.
//!
//! So the package calls `CreateProcessW` itself with `PROC_THREAD_ATTRIBUTE_HANDLE_LIST`: the
//! child inherits the three handles listed and no other, whatever else the host has open or is
//! setting up on another thread. Everything the start did before is kept: the Job Object with
//! kill-on-close, assigned while the child is suspended (created suspended, assigned, resumed),
//! so that nothing the child starts can escape it; `CREATE_NO_WINDOW`; the environment merged
//! over the inherited one (or over none); the working directory; pipes for stdin, stdout and
//! stderr read and written through tokio; the pid; waiting for the exit; ending the whole job.
//! The command line is written as Rust's standard library writes it, batch files through
//! `cmd.exe` included ([`super::super::super::command_line`]).
//!
//! Its parts: `inherit` (the handle list), `pipes` (the child's stdio), `job` (the Job Object
//! and the started child: its exit, its end), `program` (which file runs, with which
//! environment) and `win32` (handles, errors and strings as the calls take them); the start
//! itself (created suspended, put in its job, resumed) is here.
//!
//! The other ways were weighed:
//! - `std::os::windows::process::CommandExt::raw_attribute`, which would pass the handle list
//!   through std, is not stable;
//! - starting our children on the JavaScript thread, so that they never overlap libuv's: the
//!   core has no Node in it, each worker thread has its own libuv loop that spawns on its own
//!   thread, and any other native code of the app (another addon, Electron itself) is not
//!   serialised by that either; it would also block the app's event loop for every start;
//! - closing, in the suspended child, whatever it inherited besides its stdio: the child's
//!   handle table is not ours to enumerate (undocumented calls, and not under Wine).
//!
//! What stays: the listed handles must themselves be inheritable (Windows refuses others), so
//! for the duration of `CreateProcessW` the child's ends of its pipes are inheritable, and a
//! process the app starts in that window without a list of its own (libuv's) can take them.
//! They are made inheritable just before the call and closed just after it. Such a process
//! holds the child's pipe ends while it runs; nothing here waits for their end-of-file (a
//! child's end is its exit and its job's, and stderr is read for a bounded while after it).

mod inherit;
mod job;
mod pipes;
mod program;
mod win32;

pub use job::JobChild;

use super::super::super::command_line;
use inherit::AttributeList;
use job::job_object;
use pipes::{null_device, pipe, Pipe};
use program::{command_prompt, environment, environment_block, is_batch_file, key_eq, resolve};
use std::ffi::{c_void, OsStr, OsString};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use std::path::Path;
use win32::{nul_terminated, os_error, raw};
use windows::core::{PCWSTR, PWSTR};
use windows::Win32::Foundation::{SetHandleInformation, HANDLE_FLAG_INHERIT};
use windows::Win32::System::JobObjects::AssignProcessToJobObject;
use windows::Win32::System::Threading::{
    CreateProcessW, ResumeThread, TerminateProcess, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, PROCESS_INFORMATION, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

/// What to start.
pub struct Request<'a> {
    /// As it was named: a path, or a file name looked for as Windows programs are.
    pub program: &'a Path,
    pub args: &'a [OsString],
    pub cwd: &'a Path,
    /// Start from an empty environment rather than the host's.
    pub clear_env: bool,
    /// Set over the environment, in order (a later one wins; names compare as Windows does).
    pub env: Vec<(OsString, OsString)>,
    /// A pipe to the child's stdin; otherwise it reads `NUL`.
    pub stdin: bool,
}

/// Starts the child suspended in a Job Object of its own with kill-on-close, with exactly its
/// three stdio handles, and lets it run.
pub fn start(request: &Request) -> io::Result<JobChild> {
    let child_path = child_path(request);
    let resolved = resolve(request.program, child_path.as_deref())?;
    let args: Vec<Vec<u16>> = request.args.iter().map(|a| a.encode_wide().collect()).collect();
    let (application, mut line) = if is_batch_file(&resolved) {
        let script: Vec<u16> = resolved.as_os_str().encode_wide().collect();
        (command_prompt()?, command_line::batch(&script, &args)?)
    } else {
        let named: Vec<u16> = request.program.as_os_str().encode_wide().collect();
        (nul_terminated(resolved.as_os_str())?, command_line::program(&named, &args)?)
    };
    line.push(0);
    let env = environment_block(&environment(request.clear_env, &request.env))?;
    let cwd = nul_terminated(request.cwd.as_os_str())?;

    let stdin = if request.stdin { Some(pipe(false)?) } else { None };
    let null = if request.stdin { None } else { Some(null_device()?) };
    let stdout = pipe(true)?;
    let stderr = pipe(true)?;
    let job = job_object()?;

    let stdin_theirs = stdin.as_ref().map(|p| &p.theirs).or(null.as_ref()).expect("a pipe or NUL");
    let theirs = [raw(stdin_theirs), raw(&stdout.theirs), raw(&stderr.theirs)];
    let attributes = AttributeList::inheriting(&theirs)?;
    // Inheritable for the call only (Windows inherits only inheritable handles, listed or
    // not); they are closed right after it.
    for handle in theirs {
        // SAFETY: handles owned here, open.
        unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT.0, HANDLE_FLAG_INHERIT) }.map_err(os_error)?;
    }
    let mut startup = STARTUPINFOEXW::default();
    startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = theirs[0];
    startup.StartupInfo.hStdOutput = theirs[1];
    startup.StartupInfo.hStdError = theirs[2];
    startup.lpAttributeList = attributes.as_raw();
    let flags = CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
    let mut info = PROCESS_INFORMATION::default();
    // SAFETY: every pointer is to a NUL-terminated buffer or structure alive for the call; the
    // attribute list and the handles it names outlive it.
    let created = unsafe {
        CreateProcessW(
            PCWSTR(application.as_ptr()),
            Some(PWSTR(line.as_mut_ptr())),
            None,
            None,
            true,
            flags,
            Some(env.as_ptr() as *const c_void),
            PCWSTR(cwd.as_ptr()),
            &startup.StartupInfo,
            &mut info,
        )
    };
    // The child's ends are the child's now (or nobody's): closed here at once, so that they are
    // inheritable no longer than the call.
    drop(attributes);
    drop(null);
    let ours = |Pipe { ours, theirs }: Pipe| {
        drop(theirs);
        ours
    };
    let (stdin_ours, stdout_ours, stderr_ours) = (stdin.map(ours), ours(stdout), ours(stderr));
    created.map_err(os_error)?;

    // SAFETY: CreateProcessW returned both handles, which are ours to close.
    let process = unsafe { OwnedHandle::from_raw_handle(info.hProcess.0) };
    let thread = unsafe { OwnedHandle::from_raw_handle(info.hThread.0) };
    // In its job before its first instruction: whatever it starts is in the job too.
    // SAFETY: handles owned here.
    let running =
        unsafe { AssignProcessToJobObject(raw(&job), raw(&process)) }.map_err(os_error).and_then(|()| {
            match unsafe { ResumeThread(raw(&thread)) } {
                u32::MAX => Err(io::Error::last_os_error()),
                _ => Ok(()),
            }
        });
    if let Err(e) = running {
        // SAFETY: the suspended child, which never ran.
        let _ = unsafe { TerminateProcess(raw(&process), 1) };
        return Err(e);
    }
    drop(thread);
    JobChild::started(info.dwProcessId, process, job, stdin_ours, stdout_ours, stderr_ours)
}

/// The `PATH` the request gives the child, if it gives one: a program named without a
/// directory is looked for there first, as the standard library does.
fn child_path(request: &Request) -> Option<OsString> {
    request.env.iter().rev().find(|(key, _)| key_eq(key, OsStr::new("PATH"))).map(|(_, v)| v.clone())
}
