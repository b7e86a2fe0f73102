//! The seed's question answered from the real server's records (filled in below).
