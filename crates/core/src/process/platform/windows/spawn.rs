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

use super::super::super::command_line;
use std::ffi::{c_void, OsStr, OsString};
use std::future::Future;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU32, Ordering};

use process_wrap::tokio::ChildWrapper;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;
use windows::core::{PCWSTR, PWSTR};
use windows::Win32::Foundation::{
    SetHandleInformation, ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, GENERIC_READ, GENERIC_WRITE, HANDLE,
    HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
};
use windows::Win32::Globalization::{CompareStringOrdinal, CSTR_EQUAL, CSTR_LESS_THAN};
use windows::Win32::Storage::FileSystem::{
    CreateFileW, FILE_FLAGS_AND_ATTRIBUTES, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, FILE_READ_ATTRIBUTES,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING, PIPE_ACCESS_INBOUND, PIPE_ACCESS_OUTBOUND,
};
use windows::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows::Win32::System::Pipes::{
    CreateNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};
use windows::Win32::System::SystemInformation::{GetSystemDirectoryW, GetWindowsDirectoryW};
use windows::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, GetExitCodeProcess, InitializeProcThreadAttributeList,
    RegisterWaitForSingleObject, ResumeThread, TerminateProcess, UnregisterWaitEx, UpdateProcThreadAttribute,
    WaitForSingleObject, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT, EXTENDED_STARTUPINFO_PRESENT,
    INFINITE, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
    STARTF_USESTDHANDLES, STARTUPINFOEXW, WT_EXECUTEINWAITTHREAD, WT_EXECUTEONLYONCE,
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
    let exit = ExitWait::register(&process)?;
    Ok(JobChild {
        pid: info.dwProcessId,
        exit,
        status: None,
        process,
        job,
        stdin: stdin_ours.map(|h| ChildStdin::from_std(std::process::ChildStdin::from(h))).transpose()?,
        stdout: Some(ChildStdout::from_std(std::process::ChildStdout::from(stdout_ours))?),
        stderr: Some(ChildStderr::from_std(std::process::ChildStderr::from(stderr_ours))?),
    })
}

/// A started child: its process, its Job Object, its pipes and the wait for its exit.
pub struct JobChild {
    pid: u32,
    // Dropped before the process handle it waits on.
    exit: ExitWait,
    status: Option<ExitStatus>,
    process: OwnedHandle,
    /// Its last handle: closing it (dropping this) ends everything still in the job.
    job: OwnedHandle,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

impl std::fmt::Debug for JobChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobChild").field("pid", &self.pid).field("status", &self.status).finish_non_exhaustive()
    }
}

impl JobChild {
    /// Terminates every process of the job (the child's exit code is then 1).
    pub fn terminate_job(&self) -> io::Result<()> {
        // SAFETY: the job handle is ours and open.
        unsafe { TerminateJobObject(raw(&self.job), 1) }.map_err(os_error)
    }

    /// Whether no process of the job runs any more (also when the job cannot be asked).
    pub fn job_is_empty(&self) -> bool {
        let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        // SAFETY: a query into a structure of the size given.
        let asked = unsafe {
            QueryInformationJobObject(
                Some(raw(&self.job)),
                JobObjectBasicAccountingInformation,
                &mut info as *mut _ as *mut c_void,
                size_of_val(&info) as u32,
                None,
            )
        };
        asked.is_err() || info.ActiveProcesses == 0
    }

    fn exit_status(&mut self) -> io::Result<ExitStatus> {
        let mut code = 0u32;
        // SAFETY: the process handle is ours and open.
        unsafe { GetExitCodeProcess(raw(&self.process), &mut code) }.map_err(os_error)?;
        let status = ExitStatus::from_raw(code);
        self.status = Some(status);
        Ok(status)
    }
}

impl ChildWrapper for JobChild {
    // The end of the chain: no native tokio child below it.
    fn inner(&self) -> &dyn ChildWrapper {
        self
    }

    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        self
    }

    fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
        self
    }

    fn process_handle(&self) -> Option<BorrowedHandle<'_>> {
        Some(self.process.as_handle())
    }

    fn stdin(&mut self) -> &mut Option<ChildStdin> {
        &mut self.stdin
    }

    fn stdout(&mut self) -> &mut Option<ChildStdout> {
        &mut self.stdout
    }

    fn stderr(&mut self) -> &mut Option<ChildStderr> {
        &mut self.stderr
    }

    fn id(&self) -> Option<u32> {
        Some(self.pid)
    }

    fn start_kill(&mut self) -> io::Result<()> {
        self.terminate_job()
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        // SAFETY: the process handle is ours and open.
        if unsafe { WaitForSingleObject(raw(&self.process), 0) } != WAIT_OBJECT_0 {
            return Ok(None);
        }
        self.exit_status().map(Some)
    }

    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            if let Some(status) = self.status {
                return Ok(status);
            }
            let mut exited = self.exit.receiver.clone();
            exited.wait_for(|&done| done).await.map_err(|_| io::Error::other("the wait for the child's exit ended"))?;
            self.exit_status()
        })
    }
}

/// The process's exit, told by the system's thread pool (`RegisterWaitForSingleObject`, as tokio
/// and libuv wait for theirs).
struct ExitWait {
    wait: HANDLE,
    sender: *mut watch::Sender<bool>,
    receiver: watch::Receiver<bool>,
}

// SAFETY: `sender` is used by the one callback and, after `UnregisterWaitEx` has waited for that
// callback, freed by `Drop`; a watch sender may be used from any thread.
unsafe impl Send for ExitWait {}
unsafe impl Sync for ExitWait {}

impl ExitWait {
    fn register(process: &OwnedHandle) -> io::Result<ExitWait> {
        let (sender, receiver) = watch::channel(false);
        let sender = Box::into_raw(Box::new(sender));
        let mut wait = HANDLE::default();
        // SAFETY: `sender` stays valid until Drop, which unregisters the wait first.
        let registered = unsafe {
            RegisterWaitForSingleObject(
                &mut wait,
                raw(process),
                Some(exited),
                Some(sender as *const c_void),
                INFINITE,
                WT_EXECUTEINWAITTHREAD | WT_EXECUTEONLYONCE,
            )
        };
        if let Err(e) = registered {
            // SAFETY: not registered: nothing else has the pointer.
            drop(unsafe { Box::from_raw(sender) });
            return Err(os_error(e));
        }
        Ok(ExitWait { wait, sender, receiver })
    }
}

unsafe extern "system" fn exited(context: *mut c_void, _timed_out: bool) {
    // SAFETY: the pointer registered above, alive until the wait is unregistered.
    let sender = unsafe { &*(context as *const watch::Sender<bool>) };
    sender.send_replace(true);
}

impl Drop for ExitWait {
    fn drop(&mut self) {
        // SAFETY: INVALID_HANDLE_VALUE: returns once a running callback finished, after which
        // nothing uses the sender.
        unsafe {
            let _ = UnregisterWaitEx(self.wait, Some(INVALID_HANDLE_VALUE));
            drop(Box::from_raw(self.sender));
        }
    }
}

/// A pipe for one of the child's stdio streams: `ours` for tokio (overlapped, as the standard
/// library's own child pipes are), `theirs` for the child (synchronous).
struct Pipe {
    ours: OwnedHandle,
    theirs: OwnedHandle,
}

/// Creates a pipe; `ours_readable`: the child writes (stdout, stderr), else it reads (stdin).
/// Neither end is inheritable.
fn pipe(ours_readable: bool) -> io::Result<Pipe> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const CAPACITY: u32 = 64 * 1024;
    let salt = {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish()
    };
    let access = if ours_readable { PIPE_ACCESS_INBOUND } else { PIPE_ACCESS_OUTBOUND };
    let mut tries = 0;
    let (ours, name) = loop {
        let name = format!(
            r"\\.\pipe\rennet-codex-{}-{}-{salt:016x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let wide = nul_terminated(OsStr::new(&name))?;
        // SAFETY: a NUL-terminated name; no security attributes (not inheritable).
        let created = unsafe {
            CreateNamedPipeW(
                PCWSTR(wide.as_ptr()),
                access | FILE_FLAG_FIRST_PIPE_INSTANCE | FILE_FLAG_OVERLAPPED,
                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                1,
                CAPACITY,
                CAPACITY,
                0,
                None,
            )
        };
        if created != INVALID_HANDLE_VALUE && !created.is_invalid() {
            // SAFETY: a handle just created, ours to close.
            break (unsafe { OwnedHandle::from_raw_handle(created.0) }, wide);
        }
        let error = io::Error::last_os_error();
        let taken = [ERROR_ACCESS_DENIED.0, ERROR_PIPE_BUSY.0].map(|c| c as i32);
        tries += 1;
        if tries >= 10 || !taken.contains(&error.raw_os_error().unwrap_or(0)) {
            return Err(error);
        }
    };
    let theirs_access = if ours_readable { GENERIC_WRITE.0 | FILE_READ_ATTRIBUTES.0 } else { GENERIC_READ.0 };
    // SAFETY: the pipe's NUL-terminated name; no security attributes (not inheritable).
    let theirs = unsafe {
        CreateFileW(
            PCWSTR(name.as_ptr()),
            theirs_access,
            Default::default(),
            None,
            OPEN_EXISTING,
            FILE_FLAGS_AND_ATTRIBUTES(0),
            None,
        )
    }
    .map_err(os_error)?;
    // SAFETY: a handle just opened, ours to close.
    let theirs = unsafe { OwnedHandle::from_raw_handle(theirs.0) };
    Ok(Pipe { ours, theirs })
}

/// `NUL`, for a child's stdin that reads nothing. Not inheritable.
fn null_device() -> io::Result<OwnedHandle> {
    let name = nul_terminated(OsStr::new(r"\\.\NUL"))?;
    // SAFETY: a NUL-terminated name; no security attributes (not inheritable).
    let handle = unsafe {
        CreateFileW(
            PCWSTR(name.as_ptr()),
            GENERIC_READ.0,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            None,
            OPEN_EXISTING,
            FILE_FLAGS_AND_ATTRIBUTES(0),
            None,
        )
    }
    .map_err(os_error)?;
    // SAFETY: a handle just opened, ours to close.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle.0) })
}

/// A Job Object whose processes all end when its last handle closes. Not inheritable.
fn job_object() -> io::Result<OwnedHandle> {
    // SAFETY: an anonymous job with default security (not inheritable).
    let job = unsafe { CreateJobObjectW(None, PCWSTR::null()) }.map_err(os_error)?;
    // SAFETY: a handle just created, ours to close.
    let job = unsafe { OwnedHandle::from_raw_handle(job.0) };
    let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: a structure of the size given.
    unsafe {
        SetInformationJobObject(
            raw(&job),
            JobObjectExtendedLimitInformation,
            &limits as *const _ as *const c_void,
            size_of_val(&limits) as u32,
        )
    }
    .map_err(os_error)?;
    Ok(job)
}

/// A `PROC_THREAD_ATTRIBUTE_HANDLE_LIST` attribute: the only handles the child inherits.
struct AttributeList {
    // usize: aligned as the list wants; the handles live as long as the list.
    buffer: Vec<usize>,
    handles: Box<[HANDLE]>,
}

impl AttributeList {
    fn inheriting(handles: &[HANDLE]) -> io::Result<AttributeList> {
        let mut size = 0usize;
        // SAFETY: a null list asks for the size one attribute needs (and fails saying so).
        let _ = unsafe { InitializeProcThreadAttributeList(None, 1, None, &mut size) };
        if size == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut list =
            AttributeList { buffer: vec![0usize; size.div_ceil(size_of::<usize>())], handles: handles.into() };
        // SAFETY: a buffer of at least `size` bytes.
        unsafe { InitializeProcThreadAttributeList(Some(list.as_raw()), 1, None, &mut size) }.map_err(os_error)?;
        // SAFETY: the handles are in `list`, which outlives every use of the attribute.
        let updated = unsafe {
            UpdateProcThreadAttribute(
                list.as_raw(),
                0,
                PROC_THREAD_ATTRIBUTE_HANDLE_LIST as usize,
                Some(list.handles.as_ptr() as *const c_void),
                size_of_val(&*list.handles),
                None,
                None,
            )
        };
        if let Err(e) = updated {
            // SAFETY: initialised above.
            unsafe { DeleteProcThreadAttributeList(list.as_raw()) };
            list.buffer.clear();
            return Err(os_error(e));
        }
        Ok(list)
    }

    fn as_raw(&self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        LPPROC_THREAD_ATTRIBUTE_LIST(self.buffer.as_ptr() as *mut c_void)
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        if !self.buffer.is_empty() {
            // SAFETY: initialised, and no longer used.
            unsafe { DeleteProcThreadAttributeList(self.as_raw()) };
        }
    }
}

/// The `PATH` the request gives the child, if it gives one: a program named without a
/// directory is looked for there first, as the standard library does.
fn child_path(request: &Request) -> Option<OsString> {
    request.env.iter().rev().find(|(key, _)| key_eq(key, OsStr::new("PATH"))).map(|(_, v)| v.clone())
}

/// The file `program` names, as the standard library finds it: a path as it is (with `.exe`
/// added when that file exists and no extension was given), a file name in the child's `PATH`,
/// the host's own directory, the system directories, then the host's `PATH`.
fn resolve(program: &Path, child_path: Option<&OsStr>) -> io::Result<PathBuf> {
    let text = program.as_os_str().to_string_lossy();
    if text.is_empty() || text.ends_with(['/', '\\']) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the program path has no file name"));
    }
    let is_file_name = !text.contains(['/', '\\', ':']);
    if !is_file_name {
        if has_extension(program, "exe") {
            return Ok(program.to_path_buf());
        }
        let mut with_exe = program.as_os_str().to_owned();
        with_exe.push(".exe");
        let with_exe = PathBuf::from(with_exe);
        return Ok(if exists(&with_exe) { with_exe } else { program.to_path_buf() });
    }
    let name = if text.contains('.') { program.to_path_buf() } else { program.with_extension("exe") };
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(paths) = child_path {
        dirs.extend(std::env::split_paths(paths));
    }
    if let Some(own) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        dirs.push(own);
    }
    dirs.extend(system_directory(GetSystemDirectoryW));
    dirs.extend(system_directory(GetWindowsDirectoryW));
    if let Some(paths) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&paths));
    }
    dirs.into_iter()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(&name))
        .find(|candidate| exists(candidate))
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("program not found: {}", program.display())))
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

fn is_batch_file(path: &Path) -> bool {
    has_extension(path, "bat") || has_extension(path, "cmd")
}

fn system_directory(get: unsafe fn(Option<&mut [u16]>) -> u32) -> Option<PathBuf> {
    let mut buffer = vec![0u16; 1024];
    // SAFETY: the buffer's length is passed with it.
    let len = unsafe { get(Some(&mut buffer)) } as usize;
    if len == 0 || len > buffer.len() {
        return None;
    }
    use std::os::windows::ffi::OsStringExt;
    Some(PathBuf::from(OsString::from_wide(&buffer[..len])))
}

/// `cmd.exe` of the system directory, which runs batch files.
fn command_prompt() -> io::Result<Vec<u16>> {
    let dir = system_directory(GetSystemDirectoryW).ok_or_else(io::Error::last_os_error)?;
    nul_terminated(dir.join("cmd.exe").as_os_str())
}

/// Whether two variable names are the same to Windows (case-insensitive, ordinal).
fn key_eq(a: &OsStr, b: &OsStr) -> bool {
    key_order(a, b) == std::cmp::Ordering::Equal
}

fn key_order(a: &OsStr, b: &OsStr) -> std::cmp::Ordering {
    let (a, b): (Vec<u16>, Vec<u16>) = (a.encode_wide().collect(), b.encode_wide().collect());
    // SAFETY: two slices with their lengths.
    match unsafe { CompareStringOrdinal(&a, &b, true) } {
        CSTR_LESS_THAN => std::cmp::Ordering::Less,
        CSTR_EQUAL => std::cmp::Ordering::Equal,
        _ => std::cmp::Ordering::Greater,
    }
}

/// The child's variables: `set` over the host's (or over none), sorted as Windows keeps them.
fn environment(clear: bool, set: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = if clear { Vec::new() } else { std::env::vars_os().collect() };
    for (key, value) in set {
        // A variable already there keeps the name it had, as the standard library keeps it.
        match vars.iter_mut().find(|(k, _)| key_eq(k, key)) {
            Some((_, v)) => *v = value.clone(),
            None => vars.push((key.clone(), value.clone())),
        }
    }
    vars.sort_by(|(a, _), (b, _)| key_order(a, b));
    vars
}

/// `NAME=value\0…\0` in UTF-16.
fn environment_block(vars: &[(OsString, OsString)]) -> io::Result<Vec<u16>> {
    let mut block = Vec::new();
    for (key, value) in vars {
        let entry: Vec<u16> = key.encode_wide().chain([b'=' as u16]).chain(value.encode_wide()).collect();
        if entry.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an environment variable contains a NUL character",
            ));
        }
        block.extend(entry);
        block.push(0);
    }
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    Ok(block)
}

fn nul_terminated(text: &OsStr) -> io::Result<Vec<u16>> {
    let mut wide: Vec<u16> = text.encode_wide().collect();
    if wide.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a name contains a NUL character"));
    }
    wide.push(0);
    Ok(wide)
}

fn raw(handle: &OwnedHandle) -> HANDLE {
    HANDLE(handle.as_raw_handle())
}

/// A Windows error as the `io::Error` of its code, so that its kind (`NotFound` …) is known.
fn os_error(error: windows::core::Error) -> io::Error {
    let code = error.code().0 as u32;
    if code & 0xFFFF_0000 == 0x8007_0000 {
        io::Error::from_raw_os_error((code & 0xFFFF) as i32)
    } else {
        io::Error::other(error)
    }
}
