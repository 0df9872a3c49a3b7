//! The Job Object every child runs in, and the started child as process-wrap holds it: its
//! pipes, the wait for its exit (told by the system's thread pool), the end of its whole job.

use super::win32::{os_error, raw};
use process_wrap::tokio::ChildWrapper;
use std::ffi::c_void;
use std::future::Future;
use std::io;
use std::os::windows::io::{AsHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::ExitStatusExt;
use std::pin::Pin;
use std::process::ExitStatus;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;
use windows::core::PCWSTR;
use windows::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0};
use windows::Win32::System::JobObjects::{
    CreateJobObjectW, JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows::Win32::System::Threading::{
    GetExitCodeProcess, RegisterWaitForSingleObject, UnregisterWaitEx, WaitForSingleObject, INFINITE,
    WT_EXECUTEINWAITTHREAD, WT_EXECUTEONLYONCE,
};

/// A Job Object whose processes all end when its last handle closes. Not inheritable.
pub(super) fn job_object() -> io::Result<OwnedHandle> {
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
    /// The child, started suspended, put in its job and resumed: its exit waited for, its pipes
    /// handed to tokio.
    pub(super) fn started(
        pid: u32,
        process: OwnedHandle,
        job: OwnedHandle,
        stdin: Option<OwnedHandle>,
        stdout: OwnedHandle,
        stderr: OwnedHandle,
    ) -> io::Result<JobChild> {
        let exit = ExitWait::register(&process)?;
        Ok(JobChild {
            pid,
            exit,
            status: None,
            process,
            job,
            stdin: stdin.map(|h| ChildStdin::from_std(std::process::ChildStdin::from(h))).transpose()?,
            stdout: Some(ChildStdout::from_std(std::process::ChildStdout::from(stdout))?),
            stderr: Some(ChildStderr::from_std(std::process::ChildStderr::from(stderr))?),
        })
    }

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
