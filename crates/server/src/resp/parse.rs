//! The request side of RESP: multibulk commands (`*N\r\n$LEN\r\nBYTES\r\n…`, what every client
//! sends) and inline commands (`PING\r\n`, what a person types into telnet), parsed from a
//! buffer without copying, with caps on every length. Malformed input is an error with Redis'
//! own wording, never a panic.

use std::ops::Range;

/// Caps the parser enforces.
#[derive(Clone, Copy, Debug)]
pub struct ParseLimits {
    /// Longest bulk string.
    pub max_bulk: usize,
    /// Most arguments in one command.
    pub max_args: usize,
    /// Longest inline command or multibulk header line.
    pub max_line: usize,
}

/// Argument slots reserved on a count line's word alone.
const RESERVED_ARGS: usize = 1024;

/// A protocol error: the message to send (after `-ERR `) before closing the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// Parses one command from the start of `buf` into `args` (ranges into `buf`). Returns the
/// bytes it used, or `None` if the command is not complete yet. An empty command (`*0`, a
/// blank inline line) leaves `args` empty.
pub fn parse(
    buf: &[u8],
    limits: &ParseLimits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    args.clear();
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, limits, args),
        Some(_) => parse_inline(buf, limits, args),
    }
}

/// The end of the line starting at `from` (the index of its `\r`), if the `\r\n` has arrived.
fn line_end(buf: &[u8], from: usize, max: usize) -> Result<Option<usize>, ProtocolError> {
    let window = &buf[from..buf.len().min(from.saturating_add(max + 2))];
    match memchr::memchr(b'\n', window) {
        Some(i) if i > 0 && window[i - 1] == b'\r' => Ok(Some(from + i - 1)),
        Some(_) => Err(ProtocolError("Protocol error: expected '\\r\\n'".into())),
        None if window.len() > max + 1 => {
            Err(ProtocolError("Protocol error: too big count string".into()))
        }
        None => Ok(None),
    }
}

/// A decimal in `digits` (optionally negative), if it is one that fits an i64.
fn number(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
    }
    Some(if negative { -value } else { value })
}

fn parse_multibulk(
    buf: &[u8],
    limits: &ParseLimits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    // A count line holds at most 20 digits; anything longer is not a count.
    const COUNT_LINE: usize = 32;
    let Some(end) = line_end(buf, 1, COUNT_LINE)? else {
        return Ok(None);
    };
    let count = number(&buf[1..end])
        .filter(|&n| n <= limits.max_args as i64)
        .ok_or_else(|| ProtocolError("Protocol error: invalid multibulk length".into()))?;
    let mut at = end + 2;
    if count <= 0 {
        return Ok(Some(at));
    }
    // Room for the arguments a count line announces, up to a few: the rest are reserved as
    // they arrive (a dozen bytes saying a million must not hold 16 MiB, as Redis caps it too).
    args.reserve((count as usize).min(RESERVED_ARGS));
    for _ in 0..count {
        match buf.get(at) {
            None => return Ok(None),
            Some(b'$') => {}
            Some(&other) => {
                return Err(ProtocolError(format!(
                    "Protocol error: expected '$', got '{}'",
                    other as char
                )))
            }
        }
        let Some(end) = line_end(buf, at + 1, COUNT_LINE)? else {
            return Ok(None);
        };
        let len = number(&buf[at + 1..end])
            .filter(|&n| n >= 0 && n <= limits.max_bulk as i64)
            .ok_or_else(|| ProtocolError("Protocol error: invalid bulk length".into()))?
            as usize;
        let start = end + 2;
        let stop = start + len;
        if buf.len() < stop + 2 {
            return Ok(None);
        }
        if &buf[stop..stop + 2] != b"\r\n" {
            return Err(ProtocolError(
                "Protocol error: bulk string not followed by '\\r\\n'".into(),
            ));
        }
        args.push(start..stop);
        at = stop + 2;
    }
    Ok(Some(at))
}

fn parse_inline(
    buf: &[u8],
    limits: &ParseLimits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    let window = &buf[..buf.len().min(limits.max_line + 1)];
    let Some(newline) = memchr::memchr(b'\n', window) else {
        if window.len() > limits.max_line {
            return Err(ProtocolError(
                "Protocol error: too big inline request".into(),
            ));
        }
        return Ok(None);
    };
    let line = &buf[..newline];
    let line = phishbloom_text::line::content(line);
    let mut at = 0;
    while at < line.len() {
        while at < line.len() && line[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while at < line.len() && !line[at].is_ascii_whitespace() {
            at += 1;
        }
        if at > start {
            if args.len() >= limits.max_args {
                return Err(ProtocolError("Protocol error: too many arguments".into()));
            }
            args.push(start..at);
        }
    }
    Ok(Some(newline + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ParseLimits = ParseLimits {
        max_bulk: 16,
        max_args: 4,
        max_line: 32,
    };

    /// The arguments of the first command and the bytes it used.
    type Words = Option<(Vec<Vec<u8>>, usize)>;

    fn words(buf: &[u8]) -> Result<Words, ProtocolError> {
        let mut args = Vec::new();
        Ok(parse(buf, &LIMITS, &mut args)?
            .map(|used| (args.iter().map(|r| buf[r.clone()].to_vec()).collect(), used)))
    }

    #[test]
    fn multibulk_commands_parse_and_wait_for_their_end() {
        let cmd = b"*3\r\n$9\r\nBF.EXISTS\r\n$1\r\nk\r\n$0\r\n\r\n";
        let (args, used) = words(cmd).unwrap().unwrap();
        assert_eq!(args, [b"BF.EXISTS".to_vec(), b"k".to_vec(), b"".to_vec()]);
        assert_eq!(used, cmd.len());
        for cut in 0..cmd.len() {
            assert_eq!(words(&cmd[..cut]).unwrap(), None, "cut at {cut}");
        }
        let mut two = cmd.to_vec();
        two.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(words(&two).unwrap().unwrap().1, cmd.len());
        assert_eq!(words(b"*0\r\n").unwrap().unwrap(), (vec![], 4));
    }

    #[test]
    fn malformed_and_oversized_input_is_an_error() {
        for bad in [
            &b"*x\r\n"[..],
            b"*5\r\n",
            b"*1\r\n+PING\r\n",
            b"*1\r\n$17\r\n",
            b"*1\r\n$-2\r\n",
            b"*1\r\n$4\r\nPINGXX",
            b"*1\n",
            b"*1\r\n$99999999999999999999999\r\n",
            b"*111111111111111111111111111111111111111111",
        ] {
            assert!(words(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_count_line_alone_reserves_few_slots() {
        let limits = ParseLimits {
            max_args: 1 << 20,
            ..LIMITS
        };
        let mut args = Vec::new();
        assert_eq!(parse(b"*1000000\r\n", &limits, &mut args), Ok(None));
        assert!(args.capacity() <= RESERVED_ARGS, "{}", args.capacity());
    }

    #[test]
    fn inline_commands_split_on_whitespace() {
        let (args, used) = words(b"PING  hello\r\nrest").unwrap().unwrap();
        assert_eq!(args, [b"PING".to_vec(), b"hello".to_vec()]);
        assert_eq!(used, 13);
        assert_eq!(words(b"PING").unwrap(), None);
        assert_eq!(words(b"\r\n").unwrap().unwrap(), (vec![], 2));
        assert!(words(&[b'a'; 40]).is_err());
        assert!(words(b"a b c d e\n").is_err());
    }
}
