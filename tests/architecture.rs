//! The crate's shape, checked: no import cycle among src/ modules, the runtime half never
//! importing the offline half (`src/offline/`), no arrow between the runtime and the f64 reference
//! (`src/reference*`) either way, and no file or function growing past the sizes
//! the architecture guide allows without being named there.
//!
//! Imports are read from the text (`crate::…` and `super::…` paths, comments and `#[cfg(test)]`
//! modules, inline or in a `tests.rs` of their own, left out), one module per file, as the compiler would resolve them; `tests` below
//! shows that the reader finds a cycle and a runtime import of the offline half when there is one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules (file stems under src/, `::`-joined; `mod.rs` is its folder) and their text.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                if !path.ends_with("bin") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
                // A `tests.rs` is a `#[cfg(test)] mod tests;` of its folder's module: tests, not
                // imports.
                let rel = path.strip_prefix("src").expect("under src");
                let mut parts: Vec<String> = rel
                    .with_extension("")
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                    parts.pop();
                }
                out.insert(parts.join("::"), std::fs::read_to_string(&path).expect("a source file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(Path::new("src"), &mut out);
    out
}

/// `text` without comments and without `#[cfg(test)]` modules.
fn code(text: &str) -> String {
    let no_comments: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |k| &l[..k]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::new();
    let mut rest = no_comments.as_str();
    while let Some(k) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..k]);
        let after = &rest[k..];
        // Skip the item that follows: through its matching closing brace (or its `;`).
        let open = after.find('{');
        let semi = after.find(';');
        let end = match (open, semi) {
            (Some(o), Some(s)) if s < o => s + 1,
            (Some(o), _) => {
                let mut depth = 0;
                let mut end = after.len();
                for (i, c) in after[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The path segments after each `crate::` / `super::` in `code`, expanded through `{…}` groups,
/// resolved to absolute module paths from module `from`.
fn paths(from: &str, code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let start_ok = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let (base, len): (Vec<String>, usize) = if start_ok && bytes[i..].starts_with(b"crate::") {
            (Vec::new(), 7)
        } else if start_ok && bytes[i..].starts_with(b"super::") {
            let mut base: Vec<String> = from.split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            let mut len = 0;
            while bytes[i + len..].starts_with(b"super::") {
                base.pop();
                len += 7;
            }
            (base, len)
        } else {
            i += 1;
            continue;
        };
        let mut acc = Vec::new();
        let end = expand(code, i + len, base, &mut acc);
        out.extend(acc);
        i = end.max(i + 1);
    }
    out
}

/// Expands the path tree at `code[at..]` with `prefix`; returns where it ends.
fn expand(code: &str, mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let bytes = code.as_bytes();
    let mut path = prefix;
    loop {
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at > start {
            path.push(code[start..at].to_owned());
        }
        if bytes[at..].starts_with(b"::") {
            at += 2;
        } else if bytes.get(at) == Some(&b'{') {
            at += 1;
            loop {
                while at < bytes.len() && bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return at + 1;
                }
                at = expand(code, at, path.clone(), out);
                while at < bytes.len() && bytes[at] != b',' && bytes[at] != b'}' {
                    at += 1;
                }
                if at < bytes.len() && bytes[at] == b',' {
                    at += 1;
                }
            }
        } else {
            out.push(path);
            return at;
        }
    }
}

/// Module → the modules it imports (the longest known module prefix of each path), itself and
/// its own submodules left out.
fn graph(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    mods.iter()
        .map(|(name, text)| {
            let mut to = BTreeSet::new();
            for path in paths(name, &code(text)) {
                let target = (0..=path.len())
                    .rev()
                    .map(|n| path[..n].join("::"))
                    .find(|m| mods.contains_key(m));
                if let Some(t) = target {
                    let own_child = !name.is_empty() && t.starts_with(&format!("{name}::"));
                    if t != *name && !t.is_empty() && !own_child {
                        to.insert(t);
                    }
                }
            }
            (name.clone(), to)
        })
        .collect()
}

/// The strongly connected sets of two or more modules (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                set.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.out.push(set);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Whether module `m` belongs to the offline half.
fn is_offline(m: &str) -> bool {
    m == "offline" || m.starts_with("offline::")
}

/// Modules that are neither half: the crate root, the built-in assets made in code (which use
/// the builder), and the tools (demo scene, benchmark, PNG files).
fn is_asset_or_tool(m: &str) -> bool {
    let top = m.split("::").next().unwrap_or("");
    ["", "mannequin", "scene", "bench", "image", "guide"].contains(&top)
}

/// Runtime modules that import a module of the offline half: `(runtime, offline)`.
fn runtime_imports_of_offline(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (from, to) in g {
        if is_offline(from) || is_asset_or_tool(from) {
            continue;
        }
        for t in to.iter().filter(|t| is_offline(t)) {
            out.push((from.clone(), t.clone()));
        }
    }
    out
}

/// Whether module `m` is the f64 reference (the oracle the runtime is checked against).
fn is_reference(m: &str) -> bool {
    m == "reference" || m.starts_with("reference::")
}

/// Whether module `m` is checked by the reference: the CPU mirrors, the codec's decode and the GPU.
fn is_checked_by_reference(m: &str) -> bool {
    let top = m.split("::").next().unwrap_or("");
    ["cpu", "codec", "gpu"].contains(&top)
}

/// Arrows that make the reference depend on the runtime or the runtime on the reference:
/// `(from, to)` where a runtime module (neither the offline half, the assets and tools, the test
/// harnesses nor the reference) imports the reference, or the reference imports a module it
/// checks.
fn reference_arrows(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (from, to) in g {
        let runtime = !is_offline(from) && !is_asset_or_tool(from) && !is_reference(from) && from != "testing";
        for t in to {
            if (runtime && is_reference(t)) || (is_reference(from) && is_checked_by_reference(t)) {
                out.push((from.clone(), t.clone()));
            }
        }
    }
    out
}

#[test]
fn no_import_cycle_among_src_modules() {
    let g = graph(&modules());
    assert!(g.len() > 40, "read {} modules", g.len());
    let found = cycles(&g);
    let show: Vec<String> = found
        .iter()
        .map(|set| {
            let arrows: Vec<String> = set
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| set.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            format!("cycle of {}: {}", set.join(", "), arrows.join("; "))
        })
        .collect();
    assert!(found.is_empty(), "{}", show.join("\n"));
}

#[test]
fn the_runtime_never_imports_the_offline_half() {
    let g = graph(&modules());
    assert!(g.contains_key("offline::builder") && g.contains_key("gpu::animator"));
    let bad = runtime_imports_of_offline(&g);
    assert!(
        bad.is_empty(),
        "runtime modules importing the offline half: {bad:?} (move what they need out of `offline`)"
    );
}

#[test]
fn the_reference_and_the_runtime_depend_on_neither_other() {
    let g = graph(&modules());
    assert!(g.contains_key("reference") && g.contains_key("codec") && g.contains_key("offline::decompress"));
    let bad = reference_arrows(&g);
    assert!(
        bad.is_empty(),
        "the runtime importing the f64 reference, or the reference importing what it checks: {bad:?} \
         (an f64 path the offline half or the tests need lives in `offline` or `reference`)"
    );
}

#[test]
fn the_reader_finds_an_arrow_between_the_reference_and_the_runtime() {
    let mut mods = BTreeMap::new();
    for m in ["codec", "cpu", "gpu", "math", "offline", "reference", "reference::ik"] {
        mods.insert(m.to_owned(), String::new());
    }
    mods.insert(
        "codec::decompress".to_owned(),
        "use crate::reference::{ClipSampler, TransformF64};".to_owned(),
    );
    mods.insert(
        "gpu::x".to_owned(),
        "// crate::reference::sample\n#[cfg(test)]\nmod tests { use crate::reference; }".to_owned(),
    );
    mods.insert(
        "reference::inertia".to_owned(),
        "use crate::cpu::inertia; use super::ik;".to_owned(),
    );
    mods.insert(
        "offline::decompress".to_owned(),
        "use crate::{codec, reference};".to_owned(),
    );
    mods.insert("cpu::inertia".to_owned(), "use crate::math;".to_owned());
    let g = graph(&mods);
    assert_eq!(
        reference_arrows(&g),
        vec![
            ("codec::decompress".to_owned(), "reference".to_owned()),
            ("reference::inertia".to_owned(), "cpu::inertia".to_owned()),
        ]
    );
}

#[test]
fn the_reader_finds_a_cycle_and_a_runtime_import_of_the_offline_half() {
    let mut mods = BTreeMap::new();
    mods.insert("a".to_owned(), "use crate::b::X;\n// use crate::c::Y;".to_owned());
    mods.insert("b".to_owned(), "use crate::{layout, a::{self, Z}};".to_owned());
    mods.insert(
        "gpu::x".to_owned(),
        "fn f() { super::super::offline::builder::LibraryBuilder::new(); }".to_owned(),
    );
    mods.insert("gpu".to_owned(), String::new());
    mods.insert("c".to_owned(), "#[cfg(test)]\nmod tests { use crate::a; }".to_owned());
    mods.insert("offline".to_owned(), String::new());
    mods.insert("offline::builder".to_owned(), "use crate::a;".to_owned());
    let g = graph(&mods);
    assert_eq!(cycles(&g), vec![vec!["a".to_owned(), "b".to_owned()]]);
    assert!(
        g["c"].is_empty() && !g["a"].contains("c"),
        "comments and tests are not imports"
    );
    assert_eq!(
        runtime_imports_of_offline(&g),
        vec![("gpu::x".to_owned(), "offline::builder".to_owned())]
    );
}

/// Most lines of a src/ file, and of a function, before it must be named in the architecture
/// guide's list of long items with a reason.
const MAX_FILE_LINES: usize = 900;
const MAX_FN_LINES: usize = 150;

/// Every `fn` of `text` with its length in lines (from its `fn` line to the closing brace at
/// the same indentation).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let after_vis = trimmed
            .strip_prefix("pub(crate) ")
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .or_else(|| trimmed.strip_prefix("pub "))
            .unwrap_or(trimmed);
        let after_const = after_vis.strip_prefix("const ").unwrap_or(after_vis);
        let Some(rest) = after_const.strip_prefix("fn ") else {
            continue;
        };
        // No body: a trait's declaration, or a twin's that `blocking!` writes the body of (its
        // signature, over one line or several, ends with `;` before any `{`).
        let signature_end = lines[i..]
            .iter()
            .find(|l| l.contains('{') || l.trim_end().ends_with(';'));
        if signature_end.is_none_or(|l| !l.contains('{')) {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            out.push((name, end + 2));
        }
    }
    out
}

/// The items the guide lists as long on purpose: `path` or `path::function`.
fn listed_long_items() -> Vec<String> {
    let guide = std::fs::read_to_string("src/guide/architecture.md").expect("the architecture guide");
    let begin = guide
        .find("<!-- long-items:begin -->")
        .expect("a list of long items in the guide");
    let end = guide
        .find("<!-- long-items:end -->")
        .expect("the end of the list of long items");
    guide[begin..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

/// Every src/ file over [`MAX_FILE_LINES`] and function over [`MAX_FN_LINES`]: `(item, lines)`.
fn long_items() -> Vec<(String, usize)> {
    fn walk(dir: &Path, out: &mut Vec<(String, usize)>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                let name = path.to_string_lossy().replace('\\', "/");
                let n = text.lines().count();
                if n > MAX_FILE_LINES {
                    out.push((name.clone(), n));
                }
                for (f, len) in functions(&text) {
                    if len > MAX_FN_LINES {
                        out.push((format!("{name}::{f}"), len));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new("src"), &mut out);
    out.sort();
    out
}

#[test]
fn long_files_and_functions_are_named_in_the_guide_with_a_reason() {
    let listed = listed_long_items();
    let long = long_items();
    let unlisted: Vec<String> = long
        .iter()
        .filter(|(item, _)| !listed.contains(item))
        .map(|(item, n)| format!("| `{item}` | {n} | (why) |"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files over {MAX_FILE_LINES} lines or functions over {MAX_FN_LINES}: split them, or add them to the \
         long-items list of src/guide/architecture.md with a reason:\n{}",
        unlisted.join("\n")
    );
    let stale: Vec<&String> = listed
        .iter()
        .filter(|l| !long.iter().any(|(item, _)| item == *l))
        .collect();
    assert!(
        stale.is_empty(),
        "listed as long in src/guide/architecture.md but no longer over the limits (take them off): {stale:?}"
    );
}

#[test]
fn the_function_scan_measures_what_it_should() {
    let text = "fn a() {\n    x();\n}\n\nimpl T {\n    pub(crate) fn b(&self) {\n        y();\n        z();\n    }\n    fn c();\n    pub fn d(\n        x: u32,\n    ) -> u32 = Self::d_async;\n}\n";
    assert_eq!(functions(text), vec![("a".to_owned(), 3), ("b".to_owned(), 4)]);
}
