//! The reply side of RESP2 and RESP3: each function appends one reply (or an aggregate's
//! header) to an output buffer. Where the two versions differ (null, maps, booleans) the
//! protocol the client chose with `HELLO` decides.

/// The protocol version a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// RESP2, the default.
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

/// `+text`.
pub fn simple(out: &mut Vec<u8>, text: &str) {
    out.push(b'+');
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// `-message` (the message starts with its code: `ERR …`, `WRONGTYPE …`); line breaks in it
/// become spaces, as the protocol needs.
pub fn error(out: &mut Vec<u8>, message: &str) {
    out.push(b'-');
    out.extend(
        message
            .bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

/// `:n`.
pub fn int(out: &mut Vec<u8>, n: i64) {
    match n {
        0 => out.extend_from_slice(b":0\r\n"),
        1 => out.extend_from_slice(b":1\r\n"),
        n => {
            out.push(b':');
            out.extend_from_slice(n.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// A boolean: `#t`/`#f` in RESP3, `:1`/`:0` in RESP2 (RedisBloom's `ReplyWithBool`).
pub fn boolean(out: &mut Vec<u8>, value: bool, proto: Proto) {
    out.extend_from_slice(match (proto, value) {
        (Proto::Resp3, true) => b"#t\r\n",
        (Proto::Resp3, false) => b"#f\r\n",
        (Proto::Resp2, true) => b":1\r\n",
        (Proto::Resp2, false) => b":0\r\n",
    });
}

/// `$len\r\nbytes`.
pub fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(bytes.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// The null reply: `$-1` in RESP2, `_` in RESP3.
pub fn null(out: &mut Vec<u8>, proto: Proto) {
    match proto {
        Proto::Resp2 => out.extend_from_slice(b"$-1\r\n"),
        Proto::Resp3 => out.extend_from_slice(b"_\r\n"),
    }
}

/// An array of `len` elements (written next).
pub fn array(out: &mut Vec<u8>, len: usize) {
    out.push(b'*');
    out.extend_from_slice(len.to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A map of `len` key/value pairs (written next): `%len` in RESP3, a flat array of `2 × len`
/// elements in RESP2.
pub fn map(out: &mut Vec<u8>, len: usize, proto: Proto) {
    match proto {
        Proto::Resp2 => array(out, 2 * len),
        Proto::Resp3 => {
            out.push(b'%');
            out.extend_from_slice(len.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_framed_per_protocol() {
        let mut out = Vec::new();
        simple(&mut out, "OK");
        error(&mut out, "ERR a\r\nb");
        int(&mut out, 0);
        int(&mut out, -42);
        bulk(&mut out, b"hi");
        null(&mut out, Proto::Resp2);
        null(&mut out, Proto::Resp3);
        array(&mut out, 2);
        map(&mut out, 2, Proto::Resp2);
        map(&mut out, 2, Proto::Resp3);
        boolean(&mut out, true, Proto::Resp3);
        boolean(&mut out, false, Proto::Resp2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "+OK\r\n-ERR a  b\r\n:0\r\n:-42\r\n$2\r\nhi\r\n$-1\r\n_\r\n*2\r\n*4\r\n%2\r\n\
             #t\r\n:0\r\n"
        );
    }
}
