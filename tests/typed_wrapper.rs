//! The wrapper Herdr types into the receiver's terminal holds no character that a terminal, a line
//! discipline or a line editor acts on, other than its own line breaks, and the message arrives
//! exactly as it was sent (PROTOCOL.md §2, the inbound wrapper):
//!
//! - a property test over random messages drawn from all of Unicode, controls (and format
//!   characters) weighted heavily;
//! - a real pseudo-terminal in canonical mode as the receiver: the text of a send, as the fake
//!   Herdr received it, is typed into the PTY (then Herdr's Enter) and read back line by line, as
//!   a program reading lines from its terminal would. Without the escaping, DEL (the erase
//!   character) eats the message.
//!
//! Cost: about 3,000 wrappers built and parsed, and a handful of sends to the fake Herdr (well
//! under a second beyond the build).

use test_support::rng::Rng;
use test_support::world::{abi, serial, World};

use herdr_link::limits::encoded_len_upto;
use herdr_link::protocol::{extract_envelope, is_envelope, Envelope};
use serde_json::{json, Value};

/// The characters the wrapper must never hold raw but for its own `\n`: C0, DEL, C1, U+2028,
/// U+2029, written out here rather than taken from the library, and the format characters, whose
/// table is the library's (its members are pinned by the protocol's unit tests).
fn acts_as_a_key(c: char) -> bool {
    let n = u32::from(c);
    n < 0x20
        || (0x7f..=0x9f).contains(&n)
        || n == 0x2028
        || n == 0x2029
        || herdr_link::limits::is_typed_control(c)
}

/// Format characters a random draw over all of Unicode would rarely hit.
const FORMAT: [u32; 12] = [
    0xad, 0x200b, 0x200c, 0x200d, 0x200e, 0x202e, 0x2066, 0x2069, 0xfeff, 0xe0001, 0xe0067, 0x110bd,
];

/// One random character: half of them from the controls above, some format characters and ASCII
/// (quote and backslash included), the rest anywhere in Unicode.
fn random_char(rng: &mut Rng) -> char {
    const CONTROLS: [u32; 3] = [0x20, 0x21, 0x2]; // C0 (32), DEL + C1 (33), U+2028/U+2029 (2)
    match rng.below(20) {
        14 => char::from_u32(FORMAT[rng.below(FORMAT.len())]).unwrap(),
        0..=9 => {
            let which = rng.below(CONTROLS.iter().sum::<u32>() as usize) as u32;
            let c = if which < CONTROLS[0] {
                which
            } else if which < CONTROLS[0] + CONTROLS[1] {
                0x7f + which - CONTROLS[0]
            } else {
                0x2028 + which - CONTROLS[0] - CONTROLS[1]
            };
            char::from_u32(c).unwrap()
        }
        10..=13 => char::from(0x20 + rng.below(0x5f) as u8),
        _ => loop {
            if let Some(c) = char::from_u32(rng.below(0x11_0000) as u32) {
                break c;
            }
        },
    }
}

fn random_message(rng: &mut Rng) -> String {
    let mut m: String = (0..1 + rng.below(48)).map(|_| random_char(rng)).collect();
    if rng.chance(5) {
        // A long run of one control, such as 400 DELs.
        let c = random_char(rng);
        m.extend(std::iter::repeat(c).take(100 + rng.below(400)));
    }
    m
}

/// The wrapper's lines: its own line breaks are the only control characters in it, the last line
/// is the envelope and decodes to exactly the message.
fn check_wrapper(wrapper: &str, e: &Envelope) {
    let plain = Envelope::build("brain", "worker-a", "x").unwrap().wrapper();
    assert_eq!(
        wrapper.matches('\n').count(),
        plain.matches('\n').count(),
        "the wrapper's own line breaks only"
    );
    if let Some(c) = wrapper.chars().find(|&c| c != '\n' && acts_as_a_key(c)) {
        panic!("U+{:04X} typed raw in {wrapper:?}", u32::from(c));
    }
    let last = wrapper.rsplit('\n').next().unwrap();
    let v: Value = serde_json::from_str(last).unwrap();
    assert!(is_envelope(&v), "{last}");
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["protocol", "id", "from", "to", "message"]);
    assert_eq!(v["message"].as_str(), Some(e.message.as_str()));
    assert_eq!(extract_envelope(wrapper).as_ref(), Some(e));
}

#[test]
fn random_messages_travel_escaped_and_decode_exactly() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("seed {seed}");
    let mut rng = Rng(seed);
    let mut sent = 0;
    for _ in 0..3000 {
        let message = random_message(&mut rng);
        let e = match Envelope::build("brain", "worker-a", &message) {
            Ok(e) => e,
            Err(err) => {
                // Only a blank message stays home.
                assert!(message.trim().is_empty(), "{message:?}: {err:?}");
                assert_eq!(err.code(), "SEND_FAILED");
                continue;
            }
        };
        sent += 1;
        check_wrapper(&e.wrapper(), &e);
        // The size rule counts the message as the envelope line holds it.
        let empty = Envelope {
            message: String::new(),
            ..e.clone()
        };
        assert_eq!(
            encoded_len_upto(&message, usize::MAX),
            e.to_json().len() - empty.to_json().len(),
            "seed {seed}: {message:?}"
        );
    }
    assert!(sent > 2500, "{sent}");
}

/// A pseudo-terminal whose slave side is in canonical mode, as a shell or a line-reading program
/// has it (erase DEL, kill ^U, werase ^W, lnext ^V, CR read as NL, signals, UTF-8). Echo is off,
/// so nothing has to drain the master.
struct Pty {
    master: std::fs::File,
    slave: std::fs::File,
}

impl Pty {
    fn open() -> Pty {
        use std::os::fd::FromRawFd;
        // SAFETY: plain libc calls on descriptors this function owns; every result is checked.
        unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(m >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(m), 0);
            assert_eq!(libc::unlockpt(m), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
            let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(s >= 0, "open the slave");
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(s, &mut t), 0);
            t.c_iflag |= libc::ICRNL | libc::IUTF8;
            t.c_lflag |= libc::ICANON | libc::IEXTEN | libc::ISIG;
            t.c_lflag &= !libc::ECHO;
            assert_eq!(t.c_cc[libc::VERASE], 0x7f, "DEL erases");
            assert_eq!(libc::tcsetattr(s, libc::TCSANOW, &t), 0);
            Pty {
                master: std::fs::File::from_raw_fd(m),
                slave: std::fs::File::from_raw_fd(s),
            }
        }
    }

    /// Types `text` and then Herdr's Enter (`\r`), as `agent prompt` does for a program without
    /// bracketed paste, and reads back the `lines` lines the program gets.
    fn type_and_read(&self, text: &str, lines: usize) -> Vec<Vec<u8>> {
        use std::io::{Read, Write};
        let mut master = self.master.try_clone().unwrap();
        let typed = format!("{text}\r").into_bytes();
        let writer = std::thread::spawn(move || master.write_all(&typed).unwrap());
        let mut slave = &self.slave;
        let mut got = Vec::new();
        let mut buf = vec![0u8; 8192];
        while got.iter().filter(|b| **b == b'\n').count() < lines {
            let mut poll = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(slave),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd. The bound only turns a hang into a failure.
            let ready = unsafe { libc::poll(&mut poll, 1, 20_000) };
            assert_eq!(
                ready,
                1,
                "no line within 20 s; got {:?}",
                String::from_utf8_lossy(&got)
            );
            // Canonical mode: each read returns (at most) one line.
            let n = slave.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        got.split_inclusive(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\n").unwrap_or(l).to_vec())
            .collect()
    }
}

#[test]
fn a_line_reading_program_behind_a_real_pty_receives_the_exact_message() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let pty = Pty::open();
    let cases = [
        "keep A\u{7f}\u{7f}\u{7f}B intact".to_string(),
        "\u{7f}".repeat(400),
        format!("all of C1: {}", ('\u{80}'..='\u{9f}').collect::<String>()),
        "line\u{2028}separator\u{2029}paragraph \u{85} next line".into(),
        "NUL \0 here, ^C \u{3} ^D \u{4} ^U \u{15} ^W \u{17} ^V \u{16} ^Z \u{1a} ^\\ \u{1c}".into(),
        "paste end \u{1b}[201~ CSI \u{9b}2J bell \u{7} tab \t CR \r LF \n end".into(),
        "format: soft\u{ad}hyphen zw\u{200b}sp \u{202e}rlo\u{202c} bom\u{feff} 👨\u{200d}👩 tag \u{e0067}".into(),
    ];
    for message in &cases {
        w.clear_log();
        let r = a.tool(
            "pty",
            "herdr_link_send",
            json!({"to": "worker-a", "message": message}),
        );
        assert_eq!(r["ok"], true, "{r}");
        let calls = w.argv_log();
        let prompt = calls
            .iter()
            .find(|argv| argv.starts_with(&["agent".to_string(), "prompt".to_string()]))
            .expect("one agent prompt");
        let typed = &prompt[3];
        let expected: Vec<&str> = typed.split('\n').collect();
        let lines = pty.type_and_read(typed, expected.len());
        let got: Vec<String> = lines
            .iter()
            .map(|l| String::from_utf8(l.clone()).expect("UTF-8 lines"))
            .collect();
        assert_eq!(got, expected, "every line arrives as typed");
        let envelope: Value = serde_json::from_str(got.last().unwrap()).unwrap();
        assert_eq!(envelope["message"].as_str(), Some(message.as_str()));
        assert_eq!(envelope["id"], r["result"]["id"]);
    }
}
