//! The documentation against the code, so that it cannot go stale unnoticed:
//!
//! - the binding table of `src/guide/architecture.md` (between `<!-- bindings:begin -->` and
//!   `<!-- bindings:end -->`) is the one made from `shaders::Stage::bindings`; on a mismatch the
//!   test prints the table to paste;
//! - the README stays a short front door, with the two commands it promises;
//! - every relative link of the README, the changelog and the dated benchmark results names a
//!   file that exists, and the results index lists every results file;
//! - the skinning module's WGSL reference (`shaders/skinning_module.md`, rendered as
//!   `shaders::skinning_module`) documents every struct, binding and function of the module, each
//!   with the signature naga reads from the WGSL, and every define the module uses.

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
    for resource in Resource::ALL.into_iter().filter(|r| !r.is_section()) {
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
    let sections: Vec<String> = Resource::ALL
        .into_iter()
        .filter(|r| r.is_section())
        .map(|r| format!("`{}` in `{}`", r.name(), r.home().name()))
        .collect();
    out += &format!("\nSections of another resource's buffer: {}.\n", sections.join(", "));
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

/// A naga type as WGSL spells it (the kinds the skinning module uses).
fn wgsl_type(module: &naga::Module, ty: naga::Handle<naga::Type>) -> String {
    use naga::TypeInner as T;
    let scalar = |s: naga::Scalar| match (s.kind, s.width) {
        (naga::ScalarKind::Float, 4) => "f32".to_owned(),
        (naga::ScalarKind::Uint, 4) => "u32".to_owned(),
        (naga::ScalarKind::Sint, 4) => "i32".to_owned(),
        (naga::ScalarKind::Bool, _) => "bool".to_owned(),
        other => format!("{other:?}"),
    };
    let ty = &module.types[ty];
    match &ty.inner {
        T::Struct { .. } => ty.name.clone().unwrap_or_default(),
        T::Scalar(s) => scalar(*s),
        T::Vector { size, scalar: s } => format!("vec{}<{}>", *size as u8, scalar(*s)),
        T::Matrix {
            columns,
            rows,
            scalar: s,
        } => {
            format!("mat{}x{}<{}>", *columns as u8, *rows as u8, scalar(*s))
        }
        T::Array { base, size, .. } => match size {
            naga::ArraySize::Constant(n) => format!("array<{}, {n}>", wgsl_type(module, *base)),
            _ => format!("array<{}>", wgsl_type(module, *base)),
        },
        other => format!("{other:?}"),
    }
}

/// The skinning module's items as the reference must show them: (name, signature), from naga.
/// Bindings name their group and binding by the define that places them.
fn skinning_items(module: &naga::Module) -> Vec<(String, String)> {
    let mut items = Vec::new();
    for (_, ty) in module.types.iter() {
        if let (Some(name), naga::TypeInner::Struct { members, .. }) = (&ty.name, &ty.inner) {
            let fields: Vec<String> = members
                .iter()
                .map(|m| format!("{}: {}", m.name.as_deref().unwrap_or_default(), wgsl_type(module, m.ty)))
                .collect();
            items.push((name.clone(), format!("struct {name} {{ {} }}", fields.join(", "))));
        }
    }
    // Placed by `SKIN_PLACED` below: group 3, bindings 5 to 13.
    let define = |n: u32| match n {
        3 => "WGPU_ANIM_SKIN_GROUP",
        5 => "WGPU_ANIM_PALETTE_BINDING",
        6 => "WGPU_ANIM_INSTANCE_BINDING",
        7 => "WGPU_ANIM_PREVIOUS_BINDING",
        8 => "WGPU_ANIM_DUAL_BINDING",
        9 => "WGPU_ANIM_PREVIOUS_DUAL_BINDING",
        10 => "WGPU_ANIM_MORPH_WEIGHTS_BINDING",
        11 => "WGPU_ANIM_MORPH_TARGETS_BINDING",
        12 => "WGPU_ANIM_VISIBLE_BINDING",
        13 => "WGPU_ANIM_VAT_BINDING",
        _ => "an unexpected number",
    };
    for (_, var) in module.global_variables.iter() {
        let name = var.name.clone().unwrap_or_default();
        let space = match var.space {
            naga::AddressSpace::Storage { access } if access == naga::StorageAccess::LOAD => "storage, read".to_owned(),
            other => format!("{other:?}"),
        };
        let at = var.binding.as_ref().map_or(String::new(), |b| {
            format!("@group(#{{{}}}) @binding(#{{{}}}) ", define(b.group), define(b.binding))
        });
        let ty = wgsl_type(module, var.ty);
        items.push((name.clone(), format!("{at}var<{space}> {name}: {ty}")));
    }
    for (_, f) in module.functions.iter() {
        let name = f.name.clone().unwrap_or_default();
        let args: Vec<String> = f
            .arguments
            .iter()
            .map(|a| format!("{}: {}", a.name.as_deref().unwrap_or_default(), wgsl_type(module, a.ty)))
            .collect();
        let result = f
            .result
            .as_ref()
            .map_or(String::new(), |r| format!(" -> {}", wgsl_type(module, r.ty)));
        items.push((name.clone(), format!("fn {name}({}){result}", args.join(", "))));
    }
    items
}

/// The module placed where `skinning_items` reads the defines back from the numbers.
const SKIN_PLACED: wgpu_anim::gpu::SkinBinding = wgpu_anim::gpu::SkinBinding::new(3, 5)
    .with_previous(true)
    .with_dual_quaternion(true)
    .with_morph(true)
    .with_visible(true)
    .with_vat(true);

/// The reference's sections: (heading line, text up to the next heading), for headings of the
/// form "### `name`" (and what follows the name on the line).
fn reference_sections(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut in_code = false;
    for line in text.lines() {
        in_code ^= line.starts_with("```");
        if line.starts_with('#') && !in_code {
            out.extend(current.take());
            if line.starts_with("### `") {
                current = Some((line.to_owned(), String::new()));
            }
        } else if let Some((_, body)) = &mut current {
            body.push_str(line);
            body.push('\n');
        }
    }
    out.extend(current);
    out
}

/// Whitespace collapsed to single spaces.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The differences between the skinning module and its reference `doc`: the module as
/// `SkinBinding::wgsl` places it (at [`SKIN_PLACED`], with and without `previous` and
/// `dual_quaternion`), passed through
/// `edit` (the identity, or a change the check must catch).
fn skinning_reference_differences(doc: &str, edit: impl Fn(String) -> String) -> Vec<String> {
    use wgpu_anim::gpu::SkinBinding;
    let source = edit(wgpu_anim::shaders::SKINNING_MODULE.to_owned());
    let validate = |placed: &str| wgpu_anim::shaders::validate(placed).unwrap_or_else(|e| panic!("{e}"));
    let plain = |binding: SkinBinding| edit(binding.wgsl());
    let (all, _) = validate(&plain(SKIN_PLACED));
    let names = |binding: SkinBinding| -> Vec<String> {
        let (module, _) = validate(&plain(binding));
        skinning_items(&module).into_iter().map(|(n, _)| n).collect()
    };
    // What each gate's define adds: the items missing without it.
    let gates = [
        ("WGPU_ANIM_PREVIOUS_PALETTE", names(SKIN_PLACED.with_previous(false))),
        (
            "WGPU_ANIM_DUAL_QUATERNION",
            names(SKIN_PLACED.with_dual_quaternion(false)),
        ),
        ("WGPU_ANIM_VISIBLE", names(SKIN_PLACED.with_visible(false))),
    ];
    let sections = reference_sections(doc);
    let name_of = |heading: &str| heading.split('`').nth(1).unwrap_or_default().to_owned();
    let mut out = Vec::new();
    let items = skinning_items(&all);
    for (name, signature) in &items {
        let Some((heading, text)) = sections.iter().find(|(h, _)| name_of(h) == *name) else {
            out.push(format!(
                "{name} is not documented: add a section \"### `{name}`\" with\n    {signature}"
            ));
            continue;
        };
        if !collapse(text).contains(&collapse(signature)) {
            out.push(format!(
                "{name}: the documented signature is not the module's, which is\n    {signature}"
            ));
        }
        for (define, ungated) in &gates {
            let gated = !ungated.contains(name);
            if gated != heading.contains(define) {
                out.push(format!(
                    "{name}: the heading must say `{define}` exactly when the item needs it (it {} need it)",
                    if gated { "does" } else { "does not" }
                ));
            }
        }
    }
    for (heading, _) in &sections {
        let name = name_of(heading);
        if !items.iter().any(|(n, _)| *n == name) {
            out.push(format!("{name} is documented but not in the module"));
        }
    }
    out.extend(undocumented_defines(&source, doc));
    out
}

/// Every define the module `source` uses (`#{NAME}`, `#ifdef NAME`) that `doc` does not name.
fn undocumented_defines(source: &str, doc: &str) -> Vec<String> {
    let mut defines: Vec<String> = Vec::new();
    for piece in source.split("#{").skip(1) {
        defines.extend(piece.split('}').next().map(str::to_owned));
    }
    for line in source.lines().filter_map(|l| l.trim().strip_prefix("#ifdef ")) {
        defines.push(line.trim().to_owned());
    }
    defines
        .into_iter()
        .filter(|define| !doc.contains(&format!("`{define}`")))
        .map(|define| format!("the define {define} is not documented"))
        .collect()
}

#[test]
fn the_skinning_reference_matches_the_wgsl() {
    let doc = read(Path::new("shaders/skinning_module.md"));
    let differences = skinning_reference_differences(&doc, |s| s);
    assert!(
        differences.is_empty(),
        "shaders/skinning_module.md does not match shaders/skinning_module.wgsl:\n{}",
        differences.join("\n")
    );
    // The check fails on an argument's type changed, a function added or removed, a define added.
    let found = skinning_reference_differences(&doc, |s| {
        s.replace(
            "fn wgpu_anim_tint(instance: wgpu_anim_PageInstance)",
            "fn wgpu_anim_tint(instance: u32)",
        )
        .replace(
            "wgpu_anim_instances[instance.index].tint",
            "wgpu_anim_instances[instance].tint",
        )
    });
    assert!(
        found
            .iter()
            .any(|d| d.starts_with("wgpu_anim_tint: the documented signature")),
        "{found:?}"
    );
    let found =
        skinning_reference_differences(&doc, |s| format!("{s}\nfn wgpu_anim_extra() -> u32 {{ return 1u; }}\n"));
    assert!(
        found.iter().any(|d| d.starts_with("wgpu_anim_extra is not documented")),
        "{found:?}"
    );
    let gone = doc.replace("### `wgpu_anim_world_matrix`", "### `wgpu_anim_world_matrix_gone`");
    let found = skinning_reference_differences(&gone, |s| s);
    assert!(
        found
            .iter()
            .any(|d| d.starts_with("wgpu_anim_world_matrix is not documented")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.starts_with("wgpu_anim_world_matrix_gone is documented but not")),
        "{found:?}"
    );
    let undocumented = doc.replace("`WGPU_ANIM_VERTEX_LOCATION`", "the location define");
    let found = skinning_reference_differences(&undocumented, |s| s);
    assert!(
        found
            .iter()
            .any(|d| d.contains("WGPU_ANIM_VERTEX_LOCATION is not documented")),
        "{found:?}"
    );
    let source = wgpu_anim::shaders::SKINNING_MODULE;
    let found = undocumented_defines(&format!("{source}\n#ifdef WGPU_ANIM_NEW\n#endif\n"), &doc);
    assert_eq!(found, ["the define WGPU_ANIM_NEW is not documented"]);
    // The heading of an item only there with `WGPU_ANIM_PREVIOUS_PALETTE` must say so.
    let unmarked = doc.replace(
        "### `wgpu_anim_previous_position` (with `WGPU_ANIM_PREVIOUS_PALETTE`)",
        "### `wgpu_anim_previous_position`",
    );
    let found = skinning_reference_differences(&unmarked, |s| s);
    assert!(
        found
            .iter()
            .any(|d| d.starts_with("wgpu_anim_previous_position: the heading")),
        "{found:?}"
    );
}
