//! Reads an MMDB with the Rust `maxminddb` crate (the reader of Vector's `mmdb`
//! enrichment table): one address per line on standard input, the record each
//! decodes to as one line of JSON (`null` when the address has none, and for
//! text `IpAddr` does not parse: an application would not look it up).

use std::io::{self, BufRead, BufWriter, Write};
use std::net::IpAddr;

fn main() {
    let path = std::env::args().nth(1).expect("usage: iprecord-mmdb-read <file.mmdb>");
    let reader = maxminddb::Reader::open_readfile(&path).expect("open");
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in io::stdin().lock().lines() {
        let ip: IpAddr = match line.expect("read").parse() {
            Ok(ip) => ip,
            Err(_) => {
                writeln!(out, "null").expect("write");
                continue;
            }
        };
        let record = match reader.lookup::<serde_json::Value>(ip) {
            Ok(v) => v,
            Err(maxminddb::MaxMindDBError::AddressNotFoundError(_)) => serde_json::Value::Null,
            Err(e) => panic!("{}: {:?}", ip, e),
        };
        writeln!(out, "{}", record).expect("write");
    }
}
