//! The one attribute of the child's start: `PROC_THREAD_ATTRIBUTE_HANDLE_LIST`, the handles it
//! inherits and no other.

use super::win32::os_error;
use std::ffi::c_void;
use std::io;
use windows::Win32::Foundation::HANDLE;
use windows::Win32::System::Threading::{
    DeleteProcThreadAttributeList, InitializeProcThreadAttributeList, UpdateProcThreadAttribute,
    LPPROC_THREAD_ATTRIBUTE_LIST, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
};

/// A `PROC_THREAD_ATTRIBUTE_HANDLE_LIST` attribute: the only handles the child inherits.
pub(super) struct AttributeList {
    // usize: aligned as the list wants; the handles live as long as the list.
    buffer: Vec<usize>,
    handles: Box<[HANDLE]>,
}

impl AttributeList {
    pub(super) fn inheriting(handles: &[HANDLE]) -> io::Result<AttributeList> {
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

    pub(super) fn as_raw(&self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
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
