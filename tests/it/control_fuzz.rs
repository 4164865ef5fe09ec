//! Property tests for the control-mode parser: random bytes, protocol-shaped
//! token soup, and random mutations of the recorded fixtures, each cut into
//! random chunks and parsed under random bounds. The parser must never
//! panic, the events must not depend on the chunking, and the bounds hold.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use tmux_mcp::tmux::control::{Event, Parser};

fn fixtures() -> &'static [Vec<u8>] {
    static FIXTURES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tmux");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cc"))
            .collect();
        paths.sort();
        paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
    })
}

/// Parses `data` cut at `cuts` (any order, any values; taken modulo length).
fn parse(data: &[u8], cuts: &[usize], max_line: usize, max_block: usize) -> (Vec<Event>, bool) {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
    points.push(0);
    points.push(data.len());
    points.sort_unstable();
    let mut parser = Parser::new(max_line, max_block);
    let mut out = Vec::new();
    for pair in points.windows(2) {
        parser.push(&data[pair[0]..pair[1]], &mut out);
    }
    let clean = parser.finish(&mut out);
    (out, clean)
}

fn check(
    data: &[u8],
    cuts: &[usize],
    max_line: usize,
    max_block: usize,
) -> Result<(), TestCaseError> {
    let whole = parse(data, &[], max_line, max_block);
    let chunked = parse(data, cuts, max_line, max_block);
    prop_assert!(
        whole == chunked,
        "events depend on chunking (cuts {:?})",
        cuts
    );
    let effective_line = max_line.max(64);
    for event in &whole.0 {
        match event {
            Event::Reply(reply) => {
                let kept: usize = reply.lines.iter().map(|l| l.len() + 1).sum();
                prop_assert!(
                    kept <= max_block + 1,
                    "block kept {} bytes past bound {}",
                    kept,
                    max_block
                );
                prop_assert!(
                    reply
                        .lines
                        .iter()
                        .all(|l| l.len() <= effective_line && !l.contains(&b'\n'))
                );
            }
            Event::Stray(l) | Event::Unknown(l) => {
                prop_assert!(l.len() <= effective_line && !l.contains(&b'\n'))
            }
            Event::Overlong { len } => prop_assert!(*len > effective_line),
            _ => {}
        }
    }
    Ok(())
}

/// Pieces that steer random input into the interesting states.
fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..12),
        1 => Just(b"\n".to_vec()),
        1 => Just(b"%begin 1 2 1\n".to_vec()),
        1 => Just(b"%end 1 2 1\n".to_vec()),
        1 => Just(b"%error 1 2 1\n".to_vec()),
        1 => Just(b"%end 1 2 0\n".to_vec()),
        1 => Just(b"%exit".to_vec()),
        1 => Just(b"%exit too far behind\n".to_vec()),
        1 => Just(b"%output %1 ".to_vec()),
        1 => Just(b"%extended-output %1 7 : ".to_vec()),
        1 => Just(b"\\033\\134\\7".to_vec()),
        1 => Just(b"%session-changed $1 a b\n".to_vec()),
        1 => Just(b"%layout-change @1 ".to_vec()),
        1 => Just("é€😀".as_bytes().to_vec()),
        1 => Just(vec![0xff, 0xc3, b'\r']),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), token()).prop_map(|(i, t)| Mutation::Insert(i, t)),
        (any::<usize>(), 0usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 0usize..256).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn mutate(mut data: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = data.len();
        match m {
            Mutation::Flip(i, b) if len > 0 => data[i % len] = *b,
            Mutation::Flip(..) => {}
            Mutation::Insert(i, bytes) => {
                let at = i % (len + 1);
                data.splice(at..at, bytes.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let at = i % (len + 1);
                data.drain(at..(at + n).min(len));
            }
            Mutation::Duplicate(i, n) => {
                let at = i % (len + 1);
                let piece = data[at..(at + n).min(len)].to_vec();
                data.splice(at..at, piece);
            }
        }
    }
    data
}

fn bounds() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![Just((1 << 20, 1 << 24)), (0usize..300, 0usize..2000)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(data in proptest::collection::vec(any::<u8>(), 0..2048),
                    cuts in proptest::collection::vec(any::<usize>(), 0..16),
                    (max_line, max_block) in bounds()) {
        check(&data, &cuts, max_line, max_block)?;
    }

    #[test]
    fn token_soup(tokens in proptest::collection::vec(token(), 0..120),
                  cuts in proptest::collection::vec(any::<usize>(), 0..16),
                  (max_line, max_block) in bounds()) {
        check(&tokens.concat(), &cuts, max_line, max_block)?;
    }

    #[test]
    fn mutated_fixtures(which in any::<usize>(),
                        mutations in proptest::collection::vec(mutation(), 0..12),
                        cuts in proptest::collection::vec(any::<usize>(), 0..24),
                        (max_line, max_block) in bounds()) {
        let all = fixtures();
        let data = mutate(all[which % all.len()].clone(), &mutations);
        check(&data, &cuts, max_line, max_block)?;
    }

    /// Byte-by-byte feeding of a mutated fixture equals one chunk.
    #[test]
    fn mutated_fixture_bytewise(which in any::<usize>(),
                                mutations in proptest::collection::vec(mutation(), 0..6)) {
        let all = fixtures();
        let data = mutate(all[which % all.len()].clone(), &mutations);
        let cuts: Vec<usize> = (0..data.len()).collect();
        check(&data, &cuts, 1 << 20, 1 << 24)?;
    }
}
