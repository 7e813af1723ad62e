//! The documentation against the code, so that it cannot go stale unnoticed:
//!
//! - the binding table of `src/guide/architecture.md` (between `<!-- bindings:begin -->` and
//!   `<!-- bindings:end -->`) is the one made from `shaders::Stage::bindings`; on a mismatch the
//!   test prints the table to paste;
//! - the README stays a short front door, with the two commands it promises;
//! - every relative link of the README, the changelog and the dated benchmark results names a
//!   file that exists, and the results index lists every results file.

use std::path::{Path, PathBuf};
use wgpu_anim::shaders::{Access, Resource, Stage};

const BINDINGS_BEGIN: &str = "<!-- bindings:begin -->";
const BINDINGS_END: &str = "<!-- bindings:end -->";
const README_MAX_LINES: usize = 250;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn access_cell(stage: Stage, resource: Resource) -> &'static str {
    match stage.bindings().iter().find(|(r, _)| *r == resource).map(|(_, a)| *a) {
        Some(Access::Uniform) => "uniform",
        Some(Access::Read) => "read",
        Some(Access::ReadWrite) => "read_write",
        None => "",
    }
}

/// The binding table as the guide must show it: one row per resource (binding number, WGSL name
/// and type), one column per stage that binds anything, then each stage's storage buffers.
fn expected_binding_table() -> String {
    let stages: Vec<Stage> = Stage::ALL.into_iter().filter(|s| !s.bindings().is_empty()).collect();
    let mut out = String::from("| binding | name | type |");
    for stage in &stages {
        out += &format!(" {} |", stage.name());
    }
    out += "\n|---:|---|---|";
    for _ in &stages {
        out += "---|";
    }
    out.push('\n');
    for resource in Resource::ALL {
        out += &format!(
            "| {} | `{}` | `{}` |",
            resource.binding(),
            resource.name(),
            resource.wgsl_type()
        );
        for &stage in &stages {
            let cell = access_cell(stage, resource);
            out += &if cell.is_empty() {
                " |".to_string()
            } else {
                format!(" {cell} |")
            };
        }
        out.push('\n');
    }
    let counts: Vec<String> = stages
        .iter()
        .map(|s| format!("{} {}", s.name(), s.storage_buffers()))
        .collect();
    out += &format!("\nStorage buffers per stage: {}.\n", counts.join(", "));
    out
}

fn between<'a>(text: &'a str, begin: &str, end: &str) -> Option<&'a str> {
    let start = text.find(begin)? + begin.len();
    let len = text[start..].find(end)?;
    Some(&text[start..start + len])
}

fn normalize(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

#[test]
fn the_guide_binding_table_matches_the_code() {
    let path = Path::new("src/guide/architecture.md");
    let guide = read(path);
    let expected = expected_binding_table();
    let found = between(&guide, BINDINGS_BEGIN, BINDINGS_END).unwrap_or_else(|| {
        panic!(
            "{}: no table between {BINDINGS_BEGIN} and {BINDINGS_END}; it should be:\n\n{BINDINGS_BEGIN}\n{expected}{BINDINGS_END}\n",
            path.display()
        )
    });
    let (found, wanted) = (normalize(found), normalize(&expected));
    if let Some((line, (f, w))) = found.lines().zip(wanted.lines()).enumerate().find(|(_, (f, w))| f != w) {
        panic!(
            "{}: the binding table is not the one shaders::Stage::bindings declares.\nLine {} of the table is\n  {f}\nand should be\n  {w}\n\nPaste this between the markers:\n\n{BINDINGS_BEGIN}\n{expected}{BINDINGS_END}\n",
            path.display(),
            line + 1
        );
    }
    assert!(
        found == wanted,
        "{}: the binding table has {} lines where it should have {}.\n\nPaste this between the markers:\n\n{BINDINGS_BEGIN}\n{expected}{BINDINGS_END}\n",
        path.display(),
        found.lines().count(),
        wanted.lines().count()
    );
}

#[test]
fn the_binding_table_lists_every_stage_that_binds() {
    // The table's own check: a stage with bindings has a column, each binding a cell.
    let table = expected_binding_table();
    for stage in Stage::ALL {
        let header = table.lines().next().unwrap_or_default();
        let has_column = header.split('|').any(|c| c.trim() == stage.name());
        assert_eq!(has_column, !stage.bindings().is_empty(), "{}", stage.name());
        for &(resource, _) in stage.bindings() {
            assert!(!access_cell(stage, resource).is_empty());
        }
    }
}

#[test]
fn the_readme_is_short_and_has_its_two_commands() {
    let readme = read(Path::new("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines, at most {} allowed: move detail into the guide (src/guide/)",
        README_MAX_LINES - 1
    );
    for command in ["cargo run --release --example crowd", "cargo test"] {
        let present = readme.lines().any(|line| {
            line.trim_start()
                .strip_prefix(command)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
        });
        assert!(present, "README.md: no line starting with `{command}`");
    }
}

/// The targets of `](target)` links in markdown text that are neither web addresses nor anchors,
/// without their `#fragment`.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let target = target.split_whitespace().next().unwrap_or(""); // drop a "title"
        let web = ["http://", "https://", "mailto:"].iter().any(|p| target.starts_with(p));
        if !web && !target.starts_with('#') && !target.is_empty() {
            links.push(target.split('#').next().unwrap_or(target).to_string());
        }
        rest = &rest[end..];
    }
    links
}

fn check_links(file: &Path) -> Vec<String> {
    let text = read(file);
    let dir = file.parent().unwrap_or(Path::new(""));
    relative_links(&text)
        .into_iter()
        .filter(|target| !root().join(dir).join(target).exists())
        .map(|target| format!("{}: link to {target}, which does not exist", file.display()))
        .collect()
}

fn results_files() -> Vec<PathBuf> {
    let dir = root().join("benches/results");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("benches/results").join(p.file_name().expect("a file name")))
        .collect();
    files.sort();
    files
}

#[test]
fn relative_links_point_to_files_that_exist() {
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    files.extend(results_files());
    let broken: Vec<String> = files.iter().flat_map(|f| check_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        !relative_links(&read(Path::new("README.md"))).is_empty(),
        "the link scan found no link in README.md"
    );
}

#[test]
fn the_results_index_lists_every_run() {
    let index = read(Path::new("benches/results/README.md"));
    let linked = relative_links(&index);
    let missing: Vec<String> = results_files()
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .filter(|name| name != "README.md" && !linked.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "benches/results/README.md does not list: {}",
        missing.join(", ")
    );
}
