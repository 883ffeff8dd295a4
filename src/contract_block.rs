/// Finds the Active Contract in a protocol document: the first ```text fenced block after the
/// line that starts with `## 3.`, without the newline before the closing fence.
///
/// Shared by `build.rs` (which embeds the Contract from PROTOCOL.md) and the tests (which check
/// its SHA-256 against the authoritative Contract's), so both read the documents the same way.
pub fn contract_block(text: &str) -> Option<String> {
    let mut lines = text.split('\n').skip_while(|l| !l.starts_with("## 3."));
    lines.next()?;
    let mut lines = lines.skip_while(|l| l.trim_end() != "```text");
    lines.next()?;
    let mut body = Vec::new();
    for line in lines {
        if line.trim_end() == "```" {
            return Some(body.join("\n"));
        }
        body.push(line);
    }
    None
}
