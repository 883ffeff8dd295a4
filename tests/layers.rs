//! Modules only look down: no import circle among the library's modules (nor the binary's, nor
//! the fake Herdr's).
//!
//! This extends the guard's own layer test (`src/guard/tests.rs`, which checks the guard's
//! `use super::` lines against a fixed order) to every module of the crate, and to every way
//! one module names another: `use` lines and groups (`use crate::{a, b::{c, d}}`), `crate::`,
//! `super::` (also `super::super::`) and `self::` paths anywhere in a body, in a type of a field
//! or signature or in a macro, paths through a module brought in by `use` (`use crate::herdr;`
//! … `herdr::records::X`) and a parent's own children (`use process::Exit`). Comments, string
//! literals and `#[cfg(test)]` items are left out: a test may look anywhere.
//!
//! An edge A → B means a non-test item of module A names module B or an item of it; a
//! circle of such edges fails the test, with the modules and the lines that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A crate as files: path (relative to its `src/`) → source.
type Files = BTreeMap<String, String>;

/// One module: its path (`herdr::records`; the root is empty) and its file.
#[derive(Debug, Clone)]
struct Module {
    path: Vec<String>,
    file: String,
}

// --- reading sources -------------------------------------------------------------------------

/// `src` with comments, string and char literals blanked out (lengths and newlines kept, so
/// positions and line numbers stay).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some(hashes) = raw_string_start(b, i) {
            // r"..", r#".."#, br"..": up to the quote followed by as many hashes.
            let open = b[i..].iter().position(|&c| c == b'"').unwrap() + i;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat(b'#').take(hashes));
            let end = b[open + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| open + 1 + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', 'é'), or a lifetime ('a), which stays.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch + 1)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 (only ASCII bytes are replaced)")
}

/// At `i`, the start of a raw (byte) string literal: how many `#` it has.
fn raw_string_start(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    (b.get(j + hashes) == Some(&b'"')).then_some(hashes)
}

/// A token of stripped source: an identifier (or keyword), or one punctuation character
/// (`::` is one token). Each with its byte offset.
fn tokens(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, src[start..i].to_string()));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else if b[i..].starts_with(b"::") {
            out.push((i, "::".into()));
            i += 2;
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            i += 1;
        } else {
            out.push((i, (c as char).to_string()));
            i += 1;
        }
    }
    out
}

/// The index of the token after the balanced group opened at `open` (`{`, `(` or `[`).
fn after_group(t: &[(usize, String)], open: usize) -> usize {
    let (o, c) = match t[open].1.as_str() {
        "{" => ("{", "}"),
        "(" => ("(", ")"),
        _ => ("[", "]"),
    };
    let mut depth = 0;
    for (k, (_, s)) in t.iter().enumerate().skip(open) {
        if s == o {
            depth += 1;
        } else if s == c {
            depth -= 1;
            if depth == 0 {
                return k + 1;
            }
        }
    }
    t.len()
}

/// Whether the attribute starting at token `k` (`#`) is `#[cfg(test)]`.
fn is_cfg_test(t: &[(usize, String)], k: usize) -> bool {
    let words: Vec<&str> = t[k..(k + 7).min(t.len())]
        .iter()
        .map(|(_, s)| s.as_str())
        .collect();
    words == ["#", "[", "cfg", "(", "test", ")", "]"]
}

/// A token of a file's own code, with the inline module it sits in (its path below the
/// file's module; empty for the file's module itself).
type Tok = (usize, String, Vec<String>);

/// The code of one file: its tokens outside `#[cfg(test)]` items, its `mod NAME;` children and
/// its inline `mod NAME { … }` modules (by their path below the file's module).
struct Code {
    tokens: Vec<Tok>,
    children: Vec<String>,
    inline: Vec<Vec<String>>,
}

fn code_of(src: &str) -> Code {
    let t = tokens(&strip(src));
    let mut code = Code {
        tokens: Vec::new(),
        children: Vec::new(),
        inline: Vec::new(),
    };
    // Open inline modules: (name, brace depth at which it closes).
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut braces = 0usize;
    let mut k = 0;
    while k < t.len() {
        let s = t[k].1.as_str();
        if s == "#" && is_cfg_test(&t, k) {
            // Skip the attribute, any further attributes, and the item.
            let mut j = k;
            while j < t.len() && t[j].1 == "#" {
                j = after_group(&t, j + 1);
            }
            while j < t.len() && !["{", ";"].contains(&t[j].1.as_str()) {
                j = if ["(", "["].contains(&t[j].1.as_str()) {
                    after_group(&t, j)
                } else {
                    j + 1
                };
            }
            k = if j < t.len() && t[j].1 == "{" {
                after_group(&t, j)
            } else {
                j + 1
            };
            continue;
        }
        let inline: Vec<String> = open.iter().map(|(n, _)| n.clone()).collect();
        if s == "mod" && k + 2 < t.len() {
            let name = t[k + 1].1.clone();
            match t[k + 2].1.as_str() {
                ";" if open.is_empty() => code.children.push(name),
                "{" => {
                    let mut path = inline.clone();
                    path.push(name.clone());
                    code.inline.push(path);
                    open.push((name, braces));
                }
                _ => {}
            }
        }
        if s == "{" {
            braces += 1;
        } else if s == "}" {
            braces -= 1;
            if open.last().is_some_and(|(_, d)| *d == braces) {
                open.pop();
            }
        }
        code.tokens.push((t[k].0, t[k].1.clone(), inline));
        k += 1;
    }
    code
}

// --- the module tree -------------------------------------------------------------------------

/// Every file module of the crate whose root file is `root` (`lib.rs` or `main.rs`), with its
/// file; and every module known (inline ones too).
fn modules(files: &Files, root: &str) -> (Vec<Module>, BTreeSet<Vec<String>>) {
    let mut out = Vec::new();
    let mut known = BTreeSet::new();
    let mut todo = vec![(Vec::<String>::new(), root.to_string())];
    while let Some((path, file)) = todo.pop() {
        let src = files
            .get(&file)
            .unwrap_or_else(|| panic!("module {} has no file {file}", path.join("::")));
        let code = code_of(src);
        // Children live in `<dir>/` of a root or mod.rs, in `<stem>/` of any other file.
        let dir = match file.rsplit_once('/') {
            _ if file == root => String::new(),
            Some((d, "mod.rs")) => format!("{d}/"),
            _ => format!("{}/", file.trim_end_matches(".rs")),
        };
        for child in &code.children {
            let mut p = path.clone();
            p.push(child.clone());
            let flat = format!("{dir}{child}.rs");
            let nested = format!("{dir}{child}/mod.rs");
            let f = if files.contains_key(&flat) {
                flat
            } else {
                nested
            };
            todo.push((p, f));
        }
        for inline in &code.inline {
            let mut p = path.clone();
            p.extend(inline.iter().cloned());
            known.insert(p);
        }
        known.insert(path.clone());
        out.push(Module { path, file });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    (out, known)
}

// --- paths -----------------------------------------------------------------------------------

/// The paths that start at token `k` (`crate`, `super`, `self` or a name followed by `::`),
/// as segment lists with `{a, b::c}` groups and `self` in groups expanded; and the token after.
fn path_trees(t: &[Tok], k: usize) -> (Vec<Vec<String>>, usize) {
    fn tree(t: &[Tok], mut k: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
        let mut path = prefix;
        loop {
            match t.get(k).map(|x| x.1.as_str()) {
                Some("{") => {
                    let mut all = Vec::new();
                    k += 1;
                    while k < t.len() && t[k].1 != "}" {
                        if t[k].1 == "," {
                            k += 1;
                            continue;
                        }
                        let (paths, next) = tree(t, k, path.clone());
                        all.extend(paths);
                        k = next;
                    }
                    return (all, k + 1);
                }
                Some("*") => return (vec![path], k + 1),
                Some(s) if is_ident(s) => {
                    if s != "self" || path.is_empty() {
                        path.push(s.to_string());
                    }
                    k += 1;
                    if t.get(k).map(|x| x.1.as_str()) == Some("::") {
                        k += 1;
                        continue;
                    }
                    // `as NAME` renames the last segment for this file; the path is the same.
                    if t.get(k).map(|x| x.1.as_str()) == Some("as") {
                        k += 2;
                    }
                    return (vec![path], k);
                }
                _ => return (vec![path], k),
            }
        }
    }
    tree(t, k, Vec::new())
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

/// The names a `use` line at token `k` brings in, each with its path (`as` renames kept).
fn use_names(t: &[Tok], k: usize, paths: &[Vec<String>]) -> Vec<(String, Vec<String>)> {
    // Re-scan for `as` renames: `x as y` makes `y` a name for path ending in `x`.
    let end = t[k..]
        .iter()
        .position(|x| x.1 == ";")
        .map_or(t.len(), |p| k + p);
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    for w in t[k..end].windows(3) {
        if w[1].1 == "as" {
            renames.insert(w[0].1.clone(), w[2].1.clone());
        }
    }
    paths
        .iter()
        .filter_map(|p| {
            let last = p.last()?;
            if ["crate", "super", "self"].contains(&last.as_str()) {
                return None;
            }
            Some((renames.get(last).unwrap_or(last).clone(), p.clone()))
        })
        .collect()
}

/// The module a path names, from module `at` (file module `file_module`, `depth` inline levels
/// below it): the deepest module the path walks through. `None` for a path outside the crate
/// (std, serde, …) or one that names nothing known.
fn resolve(
    path: &[String],
    at: &[String],
    known: &BTreeSet<Vec<String>>,
    aliases: &BTreeMap<String, Vec<String>>,
) -> Option<Vec<String>> {
    let (mut base, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (at.to_vec(), &path[1..]),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = at[..at.len().checked_sub(ups)?].to_vec();
            (base, &path[ups..])
        }
        first => {
            let mut child = at.to_vec();
            child.push(first.to_string());
            if known.contains(&child) {
                (child, &path[1..])
            } else if let Some(m) = aliases.get(first) {
                (m.clone(), &path[1..])
            } else {
                return None;
            }
        }
    };
    for seg in rest {
        let mut next = base.clone();
        next.push(seg.clone());
        if known.contains(&next) {
            base = next;
        } else {
            break;
        }
    }
    Some(base)
}

/// Where the code of file module `m` (and of its inline modules) names another file module:
/// (from, to, line) for every naming outside tests.
fn edges_of(
    files: &Files,
    m: &Module,
    known: &BTreeSet<Vec<String>>,
    files_known: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<String, Vec<String>>,
) -> Vec<(Vec<String>, Vec<String>, usize)> {
    let src = &files[&m.file];
    let code = code_of(src);
    let line_of = |at: usize| src[..at].matches('\n').count() + 1;
    let t = &code.tokens;
    let here_of = |k: usize| {
        let mut here = m.path.clone();
        here.extend(t[k].2.iter().cloned());
        here
    };
    // Every path, and the names `use` lines bring in (by the module they are in).
    let mut aliases: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    let mut found: Vec<(Vec<String>, usize, Vec<String>)> = Vec::new();
    let mut k = 0;
    while k < t.len() {
        let word = t[k].1.as_str();
        let starts_path = is_ident(word)
            && t.get(k + 1).map(|x| x.1.as_str()) == Some("::")
            && (k == 0 || t[k - 1].1 != "::");
        let is_use = word == "use";
        if !(is_use || starts_path) {
            k += 1;
            continue;
        }
        let from = if is_use { k + 1 } else { k };
        let (paths, next) = path_trees(t, from);
        let here = here_of(k);
        if is_use {
            for (name, p) in use_names(t, from, &paths) {
                aliases.insert((here.clone(), name), p);
            }
        }
        for p in paths {
            found.push((p, t[k].0, here.clone()));
        }
        k = next.max(k + 1);
    }
    // The names `use` brings in that are modules themselves (`use crate::herdr;`).
    let mut module_aliases: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for ((here, name), p) in &aliases {
        let Some(target) = resolve(p, here, known, &BTreeMap::new()) else {
            continue;
        };
        if target.last() == p.last() && !target.is_empty() {
            module_aliases
                .entry(here.clone())
                .or_default()
                .insert(name.clone(), target);
        }
    }
    let none = BTreeMap::new();
    let mut out = Vec::new();
    for (p, at, here) in found {
        let aliases = module_aliases.get(&here).unwrap_or(&none);
        let Some(mut target) = resolve(&p, &here, known, aliases) else {
            continue;
        };
        // An item the crate root re-exports (`crate::LinkError`) is its module's.
        if target.is_empty() {
            if let Some(m) = p.get(1).and_then(|item| reexports.get(item)) {
                target = m.clone();
            }
        }
        // An inline module is part of its file's module: the file is the unit.
        let (from, to) = (m.path.clone(), file_module_of(&target, files_known));
        if to != from {
            out.push((from, to, line_of(at)));
        }
    }
    out
}

/// The file module `p` is, or lies inline in.
fn file_module_of(p: &[String], files_known: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut p = p.to_vec();
    while !files_known.contains(&p) && !p.is_empty() {
        p.pop();
    }
    p
}

/// The root's `pub use MODULE::…::ITEM;` re-exports: item name → module.
fn root_reexports(
    files: &Files,
    root: &str,
    known: &BTreeSet<Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    let code = code_of(&files[root]);
    let t = &code.tokens;
    let mut out = BTreeMap::new();
    for k in 0..t.len() {
        if t[k].1 == "use" && k > 0 && t[k - 1].1 == "pub" {
            let (paths, _) = path_trees(t, k + 1);
            for p in paths {
                if let (Some(item), Some(m)) = (p.last(), resolve(&p, &[], known, &BTreeMap::new()))
                {
                    out.insert(item.clone(), m);
                }
            }
        }
    }
    out
}

/// Every edge of the crate: module → (module it names → first line naming it).
type Graph = BTreeMap<Vec<String>, BTreeMap<Vec<String>, (String, usize)>>;

fn graph(files: &Files, root: &str) -> Graph {
    let (mods, known) = modules(files, root);
    let files_known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let reexports = root_reexports(files, root, &known);
    let mut g: Graph = files_known
        .iter()
        .map(|k| (k.clone(), BTreeMap::new()))
        .collect();
    for m in &mods {
        for (from, to, line) in edges_of(files, m, &known, &files_known, &reexports) {
            g.entry(from)
                .or_default()
                .entry(to)
                .or_insert_with(|| (m.file.clone(), line));
        }
    }
    g
}

/// The circles of `g`: each strongly connected set of two or more modules (their names), with
/// one circle through it (each step: module → module it names, and the file and line).
fn circles(g: &Graph) -> Vec<(BTreeSet<String>, Vec<String>)> {
    // Tarjan's algorithm, iterative enough for a crate's few dozen modules.
    struct State<'g> {
        g: &'g Graph,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        on: BTreeSet<&'g Vec<String>>,
        sets: Vec<Vec<&'g Vec<String>>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Vec<String>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flat_map(|e| e.keys()) {
            let Some((w, _)) = s.g.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                set.push(w);
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                s.sets.push(set);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        sets: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    // One circle through each set: walk edges inside the set from its first module back to it.
    let name = |p: &Vec<String>| {
        if p.is_empty() {
            "crate".to_string()
        } else {
            p.join("::")
        }
    };
    let mut out = Vec::new();
    for set in s.sets {
        let inside: BTreeSet<&Vec<String>> = set.iter().copied().collect();
        let start = *inside.iter().next().unwrap();
        // Breadth-first search for the shortest way back to `start`.
        let mut prev: BTreeMap<&Vec<String>, &Vec<String>> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut back = None;
        while let Some(v) = queue.pop_front() {
            for w in g[v].keys().filter(|w| inside.contains(w)) {
                let (w, _) = g.get_key_value(w).unwrap();
                if w == start {
                    back = Some(v);
                    break;
                }
                if !prev.contains_key(w) {
                    prev.insert(w, v);
                    queue.push_back(w);
                }
            }
            if back.is_some() {
                break;
            }
        }
        let mut way = vec![back.unwrap()];
        while *way.last().unwrap() != start {
            way.push(prev[way.last().unwrap()]);
        }
        way.reverse();
        let mut steps = Vec::new();
        for (i, v) in way.iter().enumerate() {
            let w = way.get(i + 1).copied().unwrap_or(start);
            let (file, line) = &g[*v][w];
            steps.push(format!("{} → {} ({file}:{line})", name(v), name(w)));
        }
        out.push((set.iter().map(|p| name(p)).collect(), steps));
    }
    out
}

// --- the tests -------------------------------------------------------------------------------

/// Every `.rs` file below `dir`, by path relative to it.
fn read_crate(dir: &Path) -> Files {
    let mut files = Files::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                files.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    files
}

/// Checks the crate in `dir` (root file `root`, at least `at_least` modules): no circle, except
/// within one of the `known` sets of modules (circles waiting to be untied; a circle that
/// reaches beyond its set, or any other, fails).
fn check(dir: &str, root: &str, at_least: usize, known: &[&[&str]]) {
    let files = read_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir));
    let g = graph(&files, root);
    assert!(g.len() >= at_least, "{dir}: only {} modules found", g.len());
    let found: Vec<_> = circles(&g)
        .into_iter()
        .filter(|(set, _)| {
            !known
                .iter()
                .any(|k| set.iter().all(|m| k.contains(&m.as_str())))
        })
        .collect();
    assert!(
        found.is_empty(),
        "{dir}: modules must only look down; these name each other in a circle:\n{}",
        found
            .iter()
            .map(|(_, c)| format!("  {}", c.join("\n    ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn modules_only_look_down() {
    // The library: no circle at all.
    check("src", "lib.rs", 30, &[]);
    // The fake Herdr: its state and its prompt submission name each other (being untied,
    // issue 28); nothing else.
    check("fake-herdr/src", "main.rs", 8, &[&["state", "submit"]]);
    // The binary: no circle at all.
    check("cli/src", "main.rs", 10, &[]);
}

/// A crate of the given files, as the test reads one.
fn fake(files: &[(&str, &str)]) -> Files {
    files
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect()
}

fn edges(files: &Files, root: &str, from: &str) -> Vec<String> {
    let g = graph(files, root);
    let key: Vec<String> = if from.is_empty() {
        Vec::new()
    } else {
        from.split("::").map(String::from).collect()
    };
    g[&key].keys().map(|p| p.join("::")).collect()
}

#[test]
fn the_check_sees_every_way_of_naming_a_module() {
    let files = fake(&[
        (
            "lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod e;\npub mod f;\npub mod g;\npub use e::Thing;\n",
        ),
        // A `crate::` path in a body, in a field type and in a group; `super::`; a module
        // brought in by `use` and a path through it; the root's re-export.
        (
            "a.rs",
            "use crate::{b, c::{self as see}};\n\
             pub struct S { x: crate::d::T }\n\
             fn f() { b::x(); see::y(); super::f::z(); let _ = crate::Thing; }\n",
        ),
        // Comments, strings, tests and a raw string name nothing.
        (
            "b.rs",
            "// crate::a::x\n/* crate::a::y */\nconst S: &str = \"crate::a::z\";\n\
             const R: &str = r#\"crate::a::w\"#;\nfn l<'a>(x: &'a str) -> char { 'c' }\n\
             #[cfg(test)]\nmod tests { use crate::a::S; }\n\
             #[cfg(test)]\nfn helper() { crate::a::q(); }\n",
        ),
        ("c.rs", "pub mod inner;\n"),
        // A child names its parent's item, and the parent its child: a circle.
        ("c/inner.rs", "use super::Parent;\n"),
        ("d.rs", "pub struct T;\n"),
        ("e.rs", "pub struct Thing;\n"),
        ("f.rs", "pub fn z() {}\n"),
        // An inline module: `super::` there is the file's module (no edge); `super::super::`
        // goes above it.
        (
            "g.rs",
            "mod inner { use super::*; fn x() { super::super::d::T; } }\n",
        ),
    ]);
    assert_eq!(edges(&files, "lib.rs", "a"), ["b", "c", "d", "e", "f"]);
    assert_eq!(edges(&files, "lib.rs", "b"), Vec::<String>::new());
    assert_eq!(edges(&files, "lib.rs", "c::inner"), ["c"]);
    assert_eq!(edges(&files, "lib.rs", "g"), ["d"]);
    assert!(circles(&graph(&files, "lib.rs")).is_empty());

    // The parent naming its child back closes a circle; so does a circle of three through
    // `crate::` paths in bodies (the kind `use` lines alone never show).
    let mut looped = files.clone();
    looped.insert(
        "c.rs".into(),
        "pub mod inner;\npub struct Parent(inner::X);\n".into(),
    );
    looped.insert(
        "d.rs".into(),
        "pub struct T;\nfn f() { crate::f::z(); }\n".into(),
    );
    looped.insert(
        "f.rs".into(),
        "pub fn z() { let _: crate::Thing; }\n".into(),
    );
    looped.insert("e.rs".into(), "pub struct Thing(crate::d::T);\n".into());
    let found: Vec<Vec<String>> = circles(&graph(&looped, "lib.rs"))
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .any(|c| c.len() == 2 && c[0].starts_with("c → c::inner")),
        "{found:#?}"
    );
    assert!(found.iter().any(|c| c.len() == 3), "{found:#?}");
    assert!(
        found[1][0].contains("(d.rs:2)") || found[0][0].contains(".rs:"),
        "{found:#?}"
    );
}
