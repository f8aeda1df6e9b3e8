//! The guard's seat inside the bundled uWebSockets.js: its socket contexts' callbacks.
//!
//! uSockets calls a context's `on_data` through a function pointer it reads on every call,
//! and exports the setters. The guard replaces `on_open`/`on_data`/`on_close` of the HTTP
//! context (every request head) and of the WebSocket context (every client frame), and
//! calls uWS's own callbacks, found by their exported symbol names, for everything it lets
//! through. Before replacing anything it checks that the context holds
//! exactly those callbacks where uSockets keeps them, so a different uWS build is refused
//! (the node then runs without the guard) instead of being called wrongly.
//!
//! Every callback runs on the thread of the event loop that owns the socket, so the state
//! (per socket: the head read so far, the frame checker) is thread-local.

mod layout;

use crate::frames::{FrameChecker, Stop};
use crate::stream::{Read, Stream};
use layout::{classify, data_slot, Seat, CONTEXT_WORDS};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type Socket = c_void;
type Context = c_void;
type OnOpen = unsafe extern "C" fn(*mut Socket, c_int, *mut c_char, c_int) -> *mut Socket;
type OnData = unsafe extern "C" fn(*mut Socket, *mut c_char, c_int) -> *mut Socket;
type OnClose = unsafe extern "C" fn(*mut Socket, c_int, *mut c_void) -> *mut Socket;

/// Why the guard could not be installed (the node runs on without it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardError {
    /// No uWebSockets.js binary among the loaded objects.
    NotLoaded,
    /// The binary lacks a symbol the guard needs (another uWS build).
    MissingSymbol(&'static str),
    /// The context does not hold uWS's callbacks where uSockets keeps them.
    UnexpectedLayout,
}

impl std::fmt::Display for GuardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuardError::NotLoaded => write!(f, "no uWebSockets.js binary is loaded"),
            GuardError::MissingSymbol(name) => write!(f, "the uWebSockets.js binary lacks {name}"),
            GuardError::UnexpectedLayout => write!(f, "the uWebSockets.js socket context is not laid out as expected"),
        }
    }
}

type SocketContextFn = unsafe extern "C" fn(c_int, *mut Socket) -> *mut Context;
type SetOnOpen = unsafe extern "C" fn(c_int, *mut Context, OnOpen);
type SetOnData = unsafe extern "C" fn(c_int, *mut Context, OnData);
type SetOnClose = unsafe extern "C" fn(c_int, *mut Context, OnClose);
type WriteFn = unsafe extern "C" fn(c_int, *mut Socket, *const c_char, c_int, c_int) -> c_int;
type ShutdownFn = unsafe extern "C" fn(c_int, *mut Socket);
type IsClosedFn = unsafe extern "C" fn(c_int, *mut Socket) -> c_int;

/// uSockets' functions and uWS's callbacks, from the loaded binary.
struct Uws {
    socket_context: SocketContextFn,
    set_on_open: SetOnOpen,
    set_on_data: SetOnData,
    set_on_close: SetOnClose,
    write: WriteFn,
    shutdown: ShutdownFn,
    is_closed: IsClosedFn,
    http_open: OnOpen,
    http_data: OnData,
    http_close: OnClose,
    ws_data: OnData,
    ws_close: OnClose,
}

const HTTP_OPEN: &str = "_ZZN3uWS11HttpContextILb0EE4initEvENUlP11us_socket_tiPciE_8__invokeES3_iS4_i";
const HTTP_DATA: &str = "_ZZN3uWS11HttpContextILb0EE4initEvENUlP11us_socket_tPciE_8__invokeES3_S4_i";
const HTTP_CLOSE: &str = "_ZZN3uWS11HttpContextILb0EE4initEvENUlP11us_socket_tiPvE_8__invokeES3_iS4_";
const WS_DATA: &str =
    "_ZZN3uWS16WebSocketContextILb0ELb1E13PerSocketDataE4initEvENUlPT_PciE_8__invokeI11us_socket_tEEDaS4_S5_i";
const WS_CLOSE: &str =
    "_ZZN3uWS16WebSocketContextILb0ELb1E13PerSocketDataE4initEvENUlPT_iPvE_8__invokeI11us_socket_tEEDaS4_iS5_";

static UWS: OnceLock<Result<Uws, GuardError>> = OnceLock::new();

fn uws() -> Result<&'static Uws, GuardError> {
    // SAFETY: the names are uSockets' C API and the mangled C++ names of uWS's callbacks,
    // whose signatures the types spell out; a build without them fails the lookup.
    UWS.get_or_init(|| unsafe { load() }).as_ref().map_err(Clone::clone)
}

/// The path of the loaded uWebSockets.js binary (`uws_<platform>_<arch>_<abi>.node`).
fn loaded_binary() -> Option<std::ffi::CString> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr hands a valid dl_phdr_info for the duration of the call.
        let name = unsafe { (*info).dlpi_name };
        if name.is_null() {
            return 0;
        }
        // SAFETY: dlpi_name is a NUL-terminated path owned by the loader, not null here.
        let path = unsafe { CStr::from_ptr(name) };
        let bytes = path.to_bytes();
        let file = bytes.rsplit(|&c| c == b'/').next().unwrap_or(bytes);
        if file.starts_with(b"uws_") && file.ends_with(b".node") {
            // SAFETY: `data` is the `&mut found` passed below, alive for the whole iteration.
            unsafe { *(data as *mut Option<std::ffi::CString>) = Some(path.to_owned()) };
            return 1;
        }
        0
    }
    let mut found: Option<std::ffi::CString> = None;
    // SAFETY: `each` matches the callback type and only writes through `data` as above.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut found as *mut _ as *mut c_void) };
    found
}

/// A symbol of the process (the Node.js executable or any library loaded globally).
///
/// # Safety
/// The caller gives the pointer the symbol's true type before calling it.
pub unsafe fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym only reads the NUL-terminated name; using the result is the caller's.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// # Safety
/// The symbols found are given the types of uSockets' C API and of uWS's callbacks: only
/// sound for a binary that exports them with those signatures (the names pin the C++ ones).
unsafe fn load() -> Result<Uws, GuardError> {
    let path = loaded_binary().ok_or(GuardError::NotLoaded)?;
    // SAFETY: RTLD_NOLOAD only returns a handle to an object already loaded; nothing runs.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return Err(GuardError::NotLoaded);
    }
    let sym = |name: &'static str| -> Result<*mut c_void, GuardError> {
        let c = std::ffi::CString::new(name).expect("no NUL");
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
        if p.is_null() {
            Err(GuardError::MissingSymbol(name))
        } else {
            Ok(p)
        }
    };
    macro_rules! f {
        ($name:expr, $type:ty) => {
            // SAFETY: the function's true type (this function's contract).
            unsafe { std::mem::transmute::<*mut c_void, $type>(sym($name)?) }
        };
    }
    Ok(Uws {
        socket_context: f!("us_socket_context", SocketContextFn),
        set_on_open: f!("us_socket_context_on_open", SetOnOpen),
        set_on_data: f!("us_socket_context_on_data", SetOnData),
        set_on_close: f!("us_socket_context_on_close", SetOnClose),
        write: f!("us_socket_write", WriteFn),
        shutdown: f!("us_socket_shutdown", ShutdownFn),
        is_closed: f!("us_socket_is_closed", IsClosedFn),
        http_open: f!(HTTP_OPEN, OnOpen),
        http_data: f!(HTTP_DATA, OnData),
        http_close: f!(HTTP_CLOSE, OnClose),
        ws_data: f!(WS_DATA, OnData),
        ws_close: f!(WS_CLOSE, OnClose),
    })
}

/// Where a context keeps its `on_data` (in words), found on the first context guarded.
static DATA_SLOT: OnceLock<Option<usize>> = OnceLock::new();

/// # Safety
/// `context` points to a live us_socket_context_t, which is larger than CONTEXT_WORDS words.
unsafe fn seat(context: *mut Context, data: usize, close: usize, guard: usize) -> Seat {
    // SAFETY: the caller's contract; the words are copied, not kept.
    let words = unsafe { std::ptr::read(context as *const [usize; CONTEXT_WORDS]) };
    let at = *DATA_SLOT.get_or_init(|| data_slot(&words, data, close));
    classify(&words, at, data, close, guard)
}

/// The `on_data` a context holds now (what uSockets would call).
///
/// # Safety
/// `context` is a live context of the loaded uWS, and a context was guarded (the slot is known).
unsafe fn current_on_data(context: *mut Context) -> OnData {
    let at = DATA_SLOT.get().copied().flatten().expect("a context was guarded");
    // SAFETY: the slot holds a callback of this type in every context (checked when seated).
    unsafe { std::mem::transmute::<usize, OnData>(*(context as *const usize).add(at)) }
}

thread_local! {
    /// The HTTP connections the guard follows on this thread's event loop (stream.rs).
    static HTTP: RefCell<HashMap<usize, Stream>> = RefCell::new(HashMap::new());
    /// WebSocket connections, by socket.
    static FRAMES: RefCell<HashMap<usize, Ws>> = RefCell::new(HashMap::new());
    /// The largest message each guarded WebSocket context accepts, by context.
    static MAX_MESSAGE: RefCell<HashMap<usize, u64>> = RefCell::new(HashMap::new());
}

/// A WebSocket connection as the guard sees it.
enum Ws {
    Checking(FrameChecker),
    /// A close frame went out: what the client sends is dropped until it closes.
    Closing,
    /// The checker failed (a bug): the connection goes on as uWS alone would serve it.
    Unchecked,
}

/// Guards the HTTP context of `listen_socket` (a `us_listen_socket_t`, which starts with
/// its `us_socket_t`). Idempotent per context.
///
/// # Safety
/// `listen_socket` must be a live listen socket of the loaded uWebSockets.js, and this must
/// run on the thread of the event loop that owns it.
pub unsafe fn guard_http(listen_socket: *mut c_void) -> Result<(), GuardError> {
    let u = uws()?;
    // SAFETY: a listen socket starts with its us_socket_t (the caller's contract).
    let context = unsafe { (u.socket_context)(0, listen_socket) };
    // SAFETY: uSockets returned the socket's live context.
    match unsafe { seat(context, u.http_data as usize, u.http_close as usize, http_data as OnData as usize) } {
        Seat::Guarded => Ok(()),
        Seat::Unknown => Err(GuardError::UnexpectedLayout),
        // SAFETY: the context holds uWS's HTTP callbacks, which the guard's wrap, on the
        // thread that owns it (the caller's contract).
        Seat::Original => unsafe {
            (u.set_on_open)(0, context, http_open);
            (u.set_on_data)(0, context, http_data);
            (u.set_on_close)(0, context, http_close);
            Ok(())
        },
    }
}

/// Guards a WebSocket context (the one uWS hands the upgrade handler), closing a client
/// that breaks RFC 6455 or sends a message over `max_message` bytes. Idempotent.
///
/// # Safety
/// As [`guard_http`], for a WebSocket context of the loaded uWebSockets.js.
pub unsafe fn guard_websocket(context: *mut c_void, max_message: u64) -> Result<(), GuardError> {
    let u = uws()?;
    // SAFETY: a live WebSocket context (the caller's contract).
    match unsafe { seat(context, u.ws_data as usize, u.ws_close as usize, ws_data as OnData as usize) } {
        Seat::Guarded => {}
        Seat::Unknown => return Err(GuardError::UnexpectedLayout),
        // SAFETY: the context holds uWS's WebSocket callbacks, on its own thread.
        Seat::Original => unsafe {
            (u.set_on_data)(0, context, ws_data);
            (u.set_on_close)(0, context, ws_close);
        },
    }
    MAX_MESSAGE.with(|m| m.borrow_mut().insert(context as usize, max_message));
    Ok(())
}

/// The message limit of the context a WebSocket belongs to (none known: no limit).
fn max_message(context: *mut Context) -> u64 {
    MAX_MESSAGE.try_with(|m| m.borrow().get(&(context as usize)).copied()).ok().flatten().unwrap_or(u64::MAX)
}

fn state() -> &'static Uws {
    uws().expect("hooks run only after the guard loaded uWS")
}

/// uWS's parsers write a fence past the end (and may prepend a spill before the start) of
/// what they are given: bytes the guard passes on live in a buffer with room both sides.
const PAD: usize = 64;

struct Padded(Vec<u8>);

impl Padded {
    fn new(bytes: &[u8]) -> Self {
        let mut v = vec![0u8; PAD + bytes.len() + PAD];
        v[PAD..PAD + bytes.len()].copy_from_slice(bytes);
        Padded(v)
    }
    fn ptr(&mut self) -> *mut c_char {
        // SAFETY: the buffer is PAD + len + PAD bytes long, so PAD is inside it.
        unsafe { self.0.as_mut_ptr().add(PAD) as *mut c_char }
    }
    fn len(&self) -> c_int {
        (self.0.len() - 2 * PAD) as c_int
    }
}

// The callbacks below are uSockets' own types: they run on the socket's event loop with the
// pointers uSockets passes (a live socket; `data` valid for `length` bytes), and call uWS's
// callbacks with the same (or a padded copy of the bytes). A thread-local that is already
// gone (a thread ending) leaves the socket to uWS, as an unguarded one: never a panic into C.

unsafe extern "C" fn http_open(s: *mut Socket, is_client: c_int, ip: *mut c_char, ip_length: c_int) -> *mut Socket {
    let u = state();
    // SAFETY: uSockets' arguments, passed on to the callback this context held.
    let s = unsafe { (u.http_open)(s, is_client, ip, ip_length) };
    // SAFETY: the socket uWS returned is live until its close callback.
    if unsafe { (u.is_closed)(0, s) } == 0 {
        let _ = HTTP.try_with(|h| h.borrow_mut().insert(s as usize, Stream::default()));
    }
    s
}

unsafe extern "C" fn http_close(s: *mut Socket, code: c_int, reason: *mut c_void) -> *mut Socket {
    let _ = HTTP.try_with(|h| h.borrow_mut().remove(&(s as usize)));
    // SAFETY: uSockets' arguments, passed on.
    unsafe { (state().http_close)(s, code, reason) }
}

unsafe extern "C" fn http_data(s: *mut Socket, data: *mut c_char, length: c_int) -> *mut Socket {
    let u = state();
    // SAFETY: uSockets passes `length` readable bytes at `data`.
    let chunk = unsafe { std::slice::from_raw_parts(data as *const u8, length.max(0) as usize) };
    let read = HTTP
        .try_with(|h| {
            let mut h = h.borrow_mut();
            let stream = h.get_mut(&(s as usize))?;
            // A panic must not cross into C (it would abort the node): the connection is then
            // left to uWS, as an unguarded one.
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stream.read(chunk)));
            let released = read.is_err() || *stream == Stream::Released;
            if released {
                h.remove(&(s as usize));
            }
            read.ok()
        })
        .ok()
        .flatten();
    let Some(Read { pass, after_upgrade }) = read else {
        // SAFETY: uSockets' arguments, passed on unread.
        return unsafe { (u.http_data)(s, data, length) };
    };
    // SAFETY: a live socket of the loaded uWS.
    let http = unsafe { (u.socket_context)(0, s) };
    let s = match pass {
        // SAFETY: uSockets' arguments, passed on.
        None => unsafe { (u.http_data)(s, data, length) },
        Some(bytes) if bytes.is_empty() => s,
        Some(bytes) => {
            let mut b = Padded::new(&bytes);
            // SAFETY: a padded copy, alive for the call, with the room uWS's parser writes in.
            unsafe { (u.http_data)(s, b.ptr(), b.len()) }
        }
    };
    let Some(rest) = after_upgrade else { return s };
    // SAFETY: the socket uWS returned.
    if unsafe { (u.is_closed)(0, s) } != 0 {
        return s;
    }
    // Frames that came with the upgrade request: to the WebSocket they now belong to (uWS
    // itself would drop them), or back to HTTP if the upgrade was refused.
    let mut rest = Padded::new(&rest);
    // SAFETY: a live socket; its context is HTTP's or the WebSocket context uWS moved it to,
    // both guarded (so the data slot is known), and the bytes are a padded copy.
    unsafe {
        let context = (u.socket_context)(0, s);
        if context == http {
            (u.http_data)(s, rest.ptr(), rest.len())
        } else {
            current_on_data(context)(s, rest.ptr(), rest.len())
        }
    }
}

unsafe extern "C" fn ws_close(s: *mut Socket, code: c_int, reason: *mut c_void) -> *mut Socket {
    let _ = FRAMES.try_with(|f| f.borrow_mut().remove(&(s as usize)));
    // SAFETY: uSockets' arguments, passed on.
    unsafe { (state().ws_close)(s, code, reason) }
}

unsafe extern "C" fn ws_data(s: *mut Socket, data: *mut c_char, length: c_int) -> *mut Socket {
    let u = state();
    // SAFETY: uSockets passes `length` readable bytes at `data`.
    let chunk = unsafe { std::slice::from_raw_parts(data as *const u8, length.max(0) as usize) };
    let verdict = FRAMES.try_with(|f| {
        let mut frames = f.borrow_mut();
        let entry = frames.entry(s as usize).or_insert_with(|| {
            // SAFETY: a live socket of the loaded uWS.
            let context = unsafe { (u.socket_context)(0, s) };
            Ws::Checking(FrameChecker::new(max_message(context)))
        });
        match entry {
            Ws::Closing => None,
            Ws::Unchecked => Some(Ok(())),
            Ws::Checking(checker) => {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| checker.push(chunk))) {
                    Ok(Ok(())) => Some(Ok(())),
                    Ok(Err(stop)) => {
                        *entry = Ws::Closing;
                        Some(Err(stop))
                    }
                    // As for HTTP: never into C; the connection goes on unchecked.
                    Err(_) => {
                        *entry = Ws::Unchecked;
                        Some(Ok(()))
                    }
                }
            }
        }
    });
    match verdict {
        // The thread's state is gone: the bytes go to uWS unchecked.
        // SAFETY: uSockets' arguments, passed on.
        Err(_) => unsafe { (u.ws_data)(s, data, length) },
        // A close frame went out: the rest is swallowed until the client closes.
        Ok(None) => s,
        // SAFETY: uSockets' arguments, passed on.
        Ok(Some(Ok(()))) => unsafe { (u.ws_data)(s, data, length) },
        Ok(Some(Err(Stop { passable, violation }))) => {
            let mut s = s;
            if passable > 0 {
                // SAFETY: the first `passable` bytes of what uSockets passed, a complete prefix.
                s = unsafe { (u.ws_data)(s, data, passable as c_int) };
                // SAFETY: the socket uWS returned.
                if unsafe { (u.is_closed)(0, s) } != 0 {
                    return s;
                }
            }
            // Written past uWS's own queue: should answers to this client still be queued
            // behind backpressure, they are lost (the client broke the protocol).
            let frame = violation.close_frame();
            // SAFETY: a live socket; the frame outlives the call (uSockets copies or sends it).
            unsafe {
                (u.write)(0, s, frame.as_ptr() as *const c_char, frame.len() as c_int, 0);
                (u.shutdown)(0, s);
            }
            s
        }
    }
}
