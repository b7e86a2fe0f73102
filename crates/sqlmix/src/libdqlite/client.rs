//! A blocking client of one dqlite node over its wire protocol: one connection, one
//! request at a time (as go-dqlite's `Protocol` serialises them), no retries of its own.
//!
//! [`Client::connect`] does what go-dqlite's connector does for a node it was told is the
//! leader: the handshake (protocol version 1), LEADER (and, while the node has not yet
//! elected itself, LEADER again), CLIENT (register). Then OPEN a database, and EXEC_SQL /
//! QUERY_SQL or PREPARE / EXEC / QUERY / FINALIZE against it. A failure response comes
//! back as [`WireError::Sqlite`] with the code dqlite sent (SQLite's, e.g. 5 "database is
//! locked"); network and protocol trouble as the other variants, after which the
//! connection is not to be reused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::wire::{self, request, response, Decoder, Encoder, Header, Rows, RowsEnd, Value};

/// What went wrong with a request.
#[derive(Debug)]
pub enum WireError {
    /// The node answered with a failure: SQLite's code (as dqlite sent it) and message.
    Sqlite {
        /// The code, e.g. 5 for SQLITE_BUSY.
        code: u64,
        /// The message, e.g. "database is locked".
        message: String,
    },
    /// The connection failed.
    Io(std::io::Error),
    /// The node sent something this client does not understand.
    Protocol(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Sqlite { code, message } => write!(f, "dqlite: {message} (code {code})"),
            WireError::Io(e) => write!(f, "dqlite connection: {e}"),
            WireError::Protocol(e) => write!(f, "dqlite protocol: {e}"),
        }
    }
}

impl std::error::Error for WireError {}

impl WireError {
    /// Whether this is SQLite's "busy" or "locked" (codes 5 and 6, extended codes
    /// included): what the runner retries.
    pub fn is_busy(&self) -> bool {
        matches!(self, WireError::Sqlite { code, .. } if matches!(code & 0xff, 5 | 6))
    }
}

impl From<std::io::Error> for WireError {
    fn from(e: std::io::Error) -> WireError {
        WireError::Io(e)
    }
}

impl From<String> for WireError {
    fn from(e: String) -> WireError {
        WireError::Protocol(e)
    }
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    fn open(address: &str) -> std::io::Result<Stream> {
        if let Some(name) = address.strip_prefix('@') {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
            Ok(Stream::Unix(UnixStream::connect_addr(&addr)?))
        } else {
            let tcp = TcpStream::connect(address)?;
            // One request is one small write answered by one small read: Nagle's delay
            // would add tens of milliseconds to every round trip.
            tcp.set_nodelay(true)?;
            Ok(Stream::Tcp(tcp))
        }
    }

    fn io(&mut self) -> &mut dyn ReadWrite {
        match self {
            Stream::Unix(s) => s,
            Stream::Tcp(s) => s,
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// A prepared statement on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt {
    /// The database it was prepared on.
    pub db: u32,
    /// Its id.
    pub id: u32,
    /// How many parameters it takes.
    pub params: u64,
}

/// What EXEC and EXEC_SQL return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecResult {
    /// The last inserted row id.
    pub last_insert_id: u64,
    /// Rows the statement changed.
    pub rows_affected: u64,
}

/// One connection to a node, registered as a client.
pub struct Client {
    stream: Stream,
    body: Vec<u8>,
    /// The leader's id and address as the node reported them.
    pub leader: (u64, String),
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dqlite client of {}", self.leader.1)
    }
}

/// How long [`Client::connect`] waits for a freshly started node to elect itself.
pub const LEADER_WAIT: Duration = Duration::from_secs(10);

impl Client {
    /// Connects to the node at `address` (`@name` or `host:port`), shakes hands, checks
    /// that it leads, and registers as client `id`.
    pub fn connect(address: &str, id: u64) -> Result<Client, WireError> {
        let deadline = Instant::now() + LEADER_WAIT;
        loop {
            let mut client = Client {
                stream: Stream::open(address)?,
                body: Vec::with_capacity(4096),
                leader: (0, String::new()),
            };
            client
                .stream
                .io()
                .write_all(&wire::PROTOCOL_VERSION.to_le_bytes())?;
            let mut d = client.call(Encoder::new(request::LEADER).u64(0), response::NODE)?;
            let leader = (d.u64()?, d.text()?);
            if leader.1.is_empty() {
                // Not elected yet (a node that has just started): ask again shortly.
                if Instant::now() >= deadline {
                    return Err(WireError::Protocol(format!(
                        "{address}: no leader after {LEADER_WAIT:?}"
                    )));
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            client.call(Encoder::new(request::CLIENT).u64(id), response::WELCOME)?;
            client.leader = leader;
            return Ok(client);
        }
    }

    /// Sends one request and reads its answer, which must be of type `expect` (a
    /// failure becomes [`WireError::Sqlite`]); returns a decoder over the answer's body.
    fn call(&mut self, req: Encoder, expect: u8) -> Result<Decoder<'_>, WireError> {
        self.stream.io().write_all(&req.finish())?;
        self.receive(expect)
    }

    fn receive(&mut self, expect: u8) -> Result<Decoder<'_>, WireError> {
        let mut head = [0u8; 8];
        self.stream.io().read_exact(&mut head)?;
        let header = Header::parse(head);
        self.body.resize(header.body_len, 0);
        self.stream.io().read_exact(&mut self.body)?;
        if header.kind == response::FAILURE {
            let mut d = Decoder::new(&self.body);
            let code = d.u64()?;
            let message = d.text()?;
            return Err(WireError::Sqlite { code, message });
        }
        if header.kind != expect {
            return Err(WireError::Protocol(format!(
                "expected response type {expect}, got {}",
                header.kind
            )));
        }
        Ok(Decoder::new(&self.body))
    }

    /// Opens database `name` (created if it does not exist); returns its id.
    pub fn open(&mut self, name: &str) -> Result<u32, WireError> {
        let req = Encoder::new(request::OPEN).text(name).u64(0).text("");
        let mut d = self.call(req, response::DB)?;
        Ok(d.u32()?)
    }

    /// Prepares `sql` on database `db`.
    pub fn prepare(&mut self, db: u32, sql: &str) -> Result<Stmt, WireError> {
        let req = Encoder::new(request::PREPARE).u64(u64::from(db)).text(sql);
        let mut d = self.call(req, response::STMT)?;
        Ok(Stmt {
            db: d.u32()?,
            id: d.u32()?,
            params: d.u64()?,
        })
    }

    fn result(d: &mut Decoder<'_>) -> Result<ExecResult, WireError> {
        Ok(ExecResult {
            last_insert_id: d.u64()?,
            rows_affected: d.u64()?,
        })
    }

    /// Executes a prepared statement.
    pub fn exec(&mut self, stmt: Stmt, values: &[Value]) -> Result<ExecResult, WireError> {
        let req = Encoder::new(request::EXEC)
            .u32(stmt.db)
            .u32(stmt.id)
            .values(values)?;
        Self::result(&mut self.call(req, response::RESULT)?)
    }

    /// Runs a prepared query and reads every row.
    pub fn query(&mut self, stmt: Stmt, values: &[Value]) -> Result<Rows, WireError> {
        let req = Encoder::new(request::QUERY)
            .u32(stmt.db)
            .u32(stmt.id)
            .values(values)?;
        self.rows(req)
    }

    /// Finalizes a prepared statement.
    pub fn finalize(&mut self, stmt: Stmt) -> Result<(), WireError> {
        let req = Encoder::new(request::FINALIZE).u32(stmt.db).u32(stmt.id);
        self.call(req, response::EMPTY).map(drop)
    }

    /// Executes SQL text (one statement or several) on database `db`.
    pub fn exec_sql(
        &mut self,
        db: u32,
        sql: &str,
        values: &[Value],
    ) -> Result<ExecResult, WireError> {
        let req = Encoder::new(request::EXEC_SQL)
            .u64(u64::from(db))
            .text(sql)
            .values(values)?;
        Self::result(&mut self.call(req, response::RESULT)?)
    }

    /// Runs a query given as SQL text and reads every row.
    pub fn query_sql(&mut self, db: u32, sql: &str, values: &[Value]) -> Result<Rows, WireError> {
        let req = Encoder::new(request::QUERY_SQL)
            .u64(u64::from(db))
            .text(sql)
            .values(values)?;
        self.rows(req)
    }

    fn rows(&mut self, req: Encoder) -> Result<Rows, WireError> {
        self.stream.io().write_all(&req.finish())?;
        let mut rows = Rows {
            columns: Vec::new(),
            rows: Vec::new(),
        };
        loop {
            self.receive(response::ROWS)?;
            if wire::decode_rows(&self.body, &mut rows)? == RowsEnd::Done {
                return Ok(rows);
            }
        }
    }
}
