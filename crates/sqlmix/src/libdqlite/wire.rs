//! dqlite's wire protocol, version 1, as bytes: requests encoded, responses decoded.
//!
//! A message is an 8-byte header (body size in 8-byte words, little endian u32; type
//! code; schema version; two unused bytes) and a body of 8-byte-aligned fields: u64 and
//! i64 words, u32 half-words, strings NUL-terminated and padded to a word, blobs as a
//! length word and padded bytes. Statement parameters (schema 0) are a count byte, a type
//! byte per value, padding to a word, then the values. A rows response is the column
//! count, the column names, then per row a header of 4-bit type codes padded to words and
//! the values, ended by a word of `0xff` (done) or `0xee` (more rows follow in another
//! message). Sources: dqlite's wire-protocol reference and go-dqlite's `internal/protocol`.
//!
//! This module does no I/O; [`super::client`] sends and receives.

/// The protocol version sent in the handshake.
pub const PROTOCOL_VERSION: u64 = 1;

/// Request type codes.
pub mod request {
    /// Who is the leader.
    pub const LEADER: u8 = 0;
    /// Register as a client.
    pub const CLIENT: u8 = 1;
    /// Open a database.
    pub const OPEN: u8 = 3;
    /// Prepare a statement.
    pub const PREPARE: u8 = 4;
    /// Execute a prepared statement.
    pub const EXEC: u8 = 5;
    /// Query with a prepared statement.
    pub const QUERY: u8 = 6;
    /// Finalize a prepared statement.
    pub const FINALIZE: u8 = 7;
    /// Execute SQL text.
    pub const EXEC_SQL: u8 = 8;
    /// Query with SQL text.
    pub const QUERY_SQL: u8 = 9;
}

/// Response type codes.
pub mod response {
    /// An error: code and message.
    pub const FAILURE: u8 = 0;
    /// A node: id and address.
    pub const NODE: u8 = 1;
    /// The answer to CLIENT.
    pub const WELCOME: u8 = 2;
    /// A database id.
    pub const DB: u8 = 4;
    /// A prepared statement.
    pub const STMT: u8 = 5;
    /// Last insert id and rows affected.
    pub const RESULT: u8 = 6;
    /// A batch of rows.
    pub const ROWS: u8 = 7;
    /// Nothing (FINALIZE).
    pub const EMPTY: u8 = 8;
}

const INTEGER: u8 = 1;
const FLOAT: u8 = 2;
const TEXT: u8 = 3;
const BLOB: u8 = 4;
const NULL: u8 = 5;
const UNIXTIME: u8 = 9;
const ISO8601: u8 = 10;
const BOOLEAN: u8 = 11;
const ROWS_DONE: u8 = 0xff;
const ROWS_PART: u8 = 0xee;

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// INTEGER (also dqlite's UNIXTIME and BOOLEAN when read).
    Int(i64),
    /// FLOAT.
    Float(f64),
    /// TEXT (also dqlite's ISO8601 when read).
    Text(String),
    /// BLOB.
    Blob(Vec<u8>),
    /// NULL.
    Null,
}

impl Value {
    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The text, if this is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_owned())
    }
}

/// A request being encoded: the header is written by [`Encoder::finish`].
#[derive(Debug)]
pub struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// A request of type `kind`.
    pub fn new(kind: u8) -> Encoder {
        let mut buf = vec![0u8; 8];
        buf[4] = kind;
        Encoder { buf }
    }

    fn pad(&mut self) {
        while self.buf.len() % 8 != 0 {
            self.buf.push(0);
        }
    }

    /// A u64 word.
    pub fn u64(mut self, v: u64) -> Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A u32 half-word.
    pub fn u32(mut self, v: u32) -> Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A NUL-terminated string padded to a word.
    pub fn text(mut self, s: &str) -> Self {
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        self.pad();
        self
    }

    /// Statement parameters, schema 0 (at most 255); none writes nothing.
    pub fn values(mut self, values: &[Value]) -> Result<Self, String> {
        if values.is_empty() {
            return Ok(self);
        }
        let n = u8::try_from(values.len())
            .map_err(|_| format!("{} parameters: at most 255", values.len()))?;
        self.buf.push(n);
        for v in values {
            self.buf.push(match v {
                Value::Int(_) => INTEGER,
                Value::Float(_) => FLOAT,
                Value::Text(_) => TEXT,
                Value::Blob(_) => BLOB,
                Value::Null => NULL,
            });
        }
        self.pad();
        for v in values {
            match v {
                Value::Int(n) => self.buf.extend_from_slice(&n.to_le_bytes()),
                Value::Float(f) => self.buf.extend_from_slice(&f.to_bits().to_le_bytes()),
                Value::Text(s) => self = self.text(s),
                Value::Blob(b) => {
                    self.buf.extend_from_slice(&(b.len() as u64).to_le_bytes());
                    self.buf.extend_from_slice(b);
                    self.pad();
                }
                Value::Null => self.buf.extend_from_slice(&0u64.to_le_bytes()),
            }
        }
        Ok(self)
    }

    /// The whole message, header included.
    pub fn finish(mut self) -> Vec<u8> {
        self.pad();
        let words = ((self.buf.len() - 8) / 8) as u32;
        self.buf[0..4].copy_from_slice(&words.to_le_bytes());
        self.buf
    }
}

/// A message header as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Body size in bytes.
    pub body_len: usize,
    /// Type code.
    pub kind: u8,
}

impl Header {
    /// Decodes the 8 header bytes.
    pub fn parse(bytes: [u8; 8]) -> Header {
        let words = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes"));
        Header {
            body_len: words as usize * 8,
            kind: bytes[4],
        }
    }
}

/// Reads the fields of a response body in order; running past the end is an error.
#[derive(Debug)]
pub struct Decoder<'a> {
    body: &'a [u8],
    at: usize,
}

fn short() -> String {
    "short message from the node".to_owned()
}

impl<'a> Decoder<'a> {
    /// A decoder over `body`.
    pub fn new(body: &'a [u8]) -> Decoder<'a> {
        Decoder { body, at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.body.len());
        let end = end.ok_or_else(short)?;
        let bytes = &self.body[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn align(&mut self) {
        self.at = self.at.div_ceil(8) * 8;
    }

    /// A u64 word.
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A u32 half-word.
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    /// A NUL-terminated, word-padded string.
    pub fn text(&mut self) -> Result<String, String> {
        let rest = &self.body[self.at.min(self.body.len())..];
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(short)?;
        let s = String::from_utf8_lossy(&rest[..nul]).into_owned();
        self.at += nul + 1;
        self.align();
        Ok(s)
    }

    fn blob(&mut self) -> Result<Vec<u8>, String> {
        let n = usize::try_from(self.u64()?).map_err(|_| short())?;
        let b = self.take(n)?.to_vec();
        self.align();
        Ok(b)
    }

    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }
}

/// The end of a batch of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsEnd {
    /// The result set is complete.
    Done,
    /// More rows follow in the next message.
    Part,
}

/// A batch of rows: the column names and the rows, with how the batch ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// The rows, each as many values as columns.
    pub rows: Vec<Vec<Value>>,
}

/// Decodes one ROWS body, appending its rows to `into` (whose columns it sets).
pub fn decode_rows(body: &[u8], into: &mut Rows) -> Result<RowsEnd, String> {
    let mut d = Decoder::new(body);
    let n = usize::try_from(d.u64()?).map_err(|_| short())?;
    let mut columns = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        columns.push(d.text()?);
    }
    into.columns = columns;
    loop {
        match d.peek() {
            None => return Err("rows without an end marker".to_owned()),
            Some(ROWS_DONE) => return Ok(RowsEnd::Done),
            Some(ROWS_PART) => return Ok(RowsEnd::Part),
            Some(_) => {}
        }
        let header = d.take(n.div_ceil(16) * 8)?;
        let types: Vec<u8> = (0..n)
            .map(|i| (header[i / 2] >> (4 * (i % 2))) & 0x0f)
            .collect();
        let mut row = Vec::with_capacity(n);
        for t in types {
            row.push(match t {
                INTEGER | UNIXTIME | BOOLEAN => Value::Int(d.u64()? as i64),
                FLOAT => Value::Float(f64::from_bits(d.u64()?)),
                TEXT | ISO8601 => Value::Text(d.text()?),
                BLOB => Value::Blob(d.blob()?),
                NULL => {
                    d.u64()?;
                    Value::Null
                }
                other => return Err(format!("unknown column type {other} in a row")),
            });
        }
        into.rows.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_word_aligned_with_their_size_in_the_header() {
        let m = Encoder::new(request::EXEC_SQL)
            .u64(7)
            .text("BEGIN")
            .values(&[Value::Int(-2), Value::from("ab"), Value::Null])
            .unwrap()
            .finish();
        assert_eq!(m.len() % 8, 0);
        let h = Header::parse(m[0..8].try_into().unwrap());
        assert_eq!((h.body_len, h.kind), (m.len() - 8, request::EXEC_SQL));
        // db word, "BEGIN\0" padded to 8, count + 3 types padded to 8, three values.
        assert_eq!(h.body_len, 8 + 8 + 8 + 24);
        assert_eq!(&m[16..22], b"BEGIN\0");
        assert_eq!(&m[24..28], &[3, INTEGER, TEXT, NULL]);
        assert_eq!(i64::from_le_bytes(m[32..40].try_into().unwrap()), -2);
        assert_eq!(&m[40..43], b"ab\0");
    }

    #[test]
    fn rows_decode_across_types_and_report_their_end() {
        let mut body = Vec::new();
        body.extend_from_slice(&2u64.to_le_bytes());
        body.extend_from_slice(b"a\0\0\0\0\0\0\0bb\0\0\0\0\0\0");
        for (n, s) in [(5i64, "x"), (-1, "hello world")] {
            let mut header = [0u8; 8];
            header[0] = INTEGER | (TEXT << 4);
            body.extend_from_slice(&header);
            body.extend_from_slice(&n.to_le_bytes());
            let mut t = s.as_bytes().to_vec();
            t.push(0);
            while t.len() % 8 != 0 {
                t.push(0);
            }
            body.extend_from_slice(&t);
        }
        body.extend_from_slice(&[0xee; 8]);
        let mut rows = Rows {
            columns: vec![],
            rows: vec![],
        };
        assert_eq!(decode_rows(&body, &mut rows), Ok(RowsEnd::Part));
        assert_eq!(rows.columns, ["a", "bb"]);
        assert_eq!(
            rows.rows,
            vec![
                vec![Value::Int(5), Value::from("x")],
                vec![Value::Int(-1), Value::from("hello world")]
            ]
        );
        let cut = &body[..body.len() - 8];
        assert!(decode_rows(cut, &mut rows).is_err(), "no end marker");
    }
}
