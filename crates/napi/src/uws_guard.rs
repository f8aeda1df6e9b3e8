//! The uWebSockets.js guard (crates/uws-guard), seated from the event loop that owns the
//! sockets: JavaScript hands over the listen socket and the WebSocket context, which
//! uWebSockets.js gives it as externals.

use napi::bindgen_prelude::Unknown;
use napi::{JsValue, ValueType};
use napi_derive::napi;
use preconf_uws_guard::hooks;
use preconf_uws_guard::hooks::global_symbol as libc_dlsym;
use std::ffi::c_void;
use std::sync::OnceLock;

/// The pointer a V8 `External` holds. uWebSockets.js makes its externals with V8's API,
/// while Node-API's `napi_get_value_external` reads a wrapper of Node's own (type-tagged
/// externals): so the value is read with V8's `External::Value`, which Node exports.
fn external(value: &Unknown) -> napi::Result<*mut c_void> {
    type ExternalValue = unsafe extern "C" fn(*const c_void) -> *mut c_void;
    static VALUE: OnceLock<Option<ExternalValue>> = OnceLock::new();
    if value.get_type()? != ValueType::External {
        return Err(napi::Error::from_reason("expected a uWebSockets.js socket or context"));
    }
    let read = VALUE.get_or_init(|| unsafe {
        let p = libc_dlsym(c"_ZNK2v88External5ValueEv");
        (!p.is_null()).then(|| std::mem::transmute::<*mut c_void, ExternalValue>(p))
    });
    let read = read.ok_or_else(|| napi::Error::from_reason("this Node.js does not export v8::External::Value"))?;
    // Safety: a napi_value is a pointer to a V8 handle of the value, which is an External.
    let pointer = unsafe { read(value.value().value as *const c_void) };
    if pointer.is_null() {
        return Err(napi::Error::from_reason("expected a uWebSockets.js socket or context"));
    }
    Ok(pointer)
}

/// Answers, on this listen socket's connections, the requests uWebSockets.js would
/// leave unanswered (HTTP/1.0, unknown verbs, malformed heads; see `GET /.refused/*`).
/// Throws when the loaded uWebSockets.js is not the build the guard knows.
#[napi]
pub fn guard_http(listen_socket: Unknown) -> napi::Result<()> {
    let pointer = external(&listen_socket)?;
    // Safety: uWebSockets.js passes its live us_listen_socket_t as this external, and
    // JavaScript calls this on the loop that owns it.
    unsafe { hooks::guard_http(pointer) }.map_err(|e| napi::Error::from_reason(format!("uWebSockets.js guard: {e}")))
}

/// Closes WebSocket clients that break RFC 6455 (1002, 1007) or send a message over
/// `max_message_bytes` (1009) with a close frame, on the context an upgrade handler got.
#[napi]
pub fn guard_websocket(context: Unknown, max_message_bytes: f64) -> napi::Result<()> {
    let pointer = external(&context)?;
    // Safety: as guard_http, for the us_socket_context_t an upgrade handler receives.
    unsafe { hooks::guard_websocket(pointer, max_message_bytes as u64) }
        .map_err(|e| napi::Error::from_reason(format!("uWebSockets.js guard: {e}")))
}
