use phishbloom_blocklist::scan::{ScanOptions, Scanner};
use phishbloom_blocklist::Blocklist;
fn main() {
    let list = Blocklist::open(std::env::args().nth(1).unwrap()).unwrap();
    let docs = phishbloom_lab::measure::keywords::generated_emails(50 << 20, 14);
    let mut s = Scanner::new(&list, ScanOptions::default()).unwrap();
    let t = std::time::Instant::now();
    let mut f = 0;
    for d in &docs {
        f += s.scan(d).unwrap().hits;
    }
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    eprintln!(
        "{f} hits {:.1} MB/s",
        bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
    );
    let mut tok = phishbloom_text::tokens::Tokens::new();
    let t = std::time::Instant::now();
    let mut n = 0;
    for d in &docs {
        tok.tokenize(d);
        n += tok.len();
    }
    eprintln!(
        "{n} tokens: tokenize only {:.1} MB/s",
        bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
    );
}
