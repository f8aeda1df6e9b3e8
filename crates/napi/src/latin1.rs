//! Text that crosses the boundary as Latin-1. V8 keeps ASCII strings one byte per
//! character, so Latin-1 is a copy each way where UTF-8 is a decode into V8 and an encode
//! out of it (measured per cheap read: 3.0 k instructions to make the answer's string,
//! 1.7 k to read two arguments).

use napi::bindgen_prelude::Latin1String;

/// An argument the TypeScript side has validated (hex, a tag, a number: ASCII) before the
/// call. Only such arguments may cross as Latin-1: V8 writes a character beyond U+00FF as
/// its low byte. A byte beyond ASCII becomes U+FFFD, which no parser of the chain accepts.
pub fn arg(text: Latin1String) -> String {
    from_bytes(&text)
}

fn from_bytes(bytes: &[u8]) -> String {
    if bytes.is_ascii() {
        // ASCII is UTF-8 as it is.
        return String::from_utf8_lossy(bytes).into_owned();
    }
    bytes.iter().map(|&b| if b.is_ascii() { b as char } else { '\u{FFFD}' }).collect()
}

/// JSON text as Latin-1. A rendered answer is ASCII (hex, numbers, tags); a character
/// beyond ASCII can only sit inside a JSON string (e.g. a message relayed from a fork's
/// upstream) and is written as its `\u` escape, which means the same character.
pub fn json(text: String) -> Latin1String {
    if text.is_ascii() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_beyond_ascii_is_escaped_to_the_same_value() {
        let text = r#"{"message":"caf\u00e9 \ud83d\ude00","n":"0x1"}"#;
        let raw = "{\"message\":\"café 😀\",\"n\":\"0x1\"}".to_string();
        let out = json(raw.clone());
        assert_eq!(std::str::from_utf8(&out).unwrap(), text);
        let a: serde_json::Value = serde_json::from_str(text).unwrap();
        let b: serde_json::Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(a, b);
        assert_eq!(&*json("\"0x2a\"".into()), b"\"0x2a\"");
    }

    #[test]
    fn args_beyond_ascii_cannot_read_as_ascii() {
        assert_eq!(arg(Latin1String::from("0xab".to_string())), "0xab");
        assert_eq!(from_bytes(&[b'0', b'x', 0xe9, b'1']), "0x\u{FFFD}1");
    }
}
