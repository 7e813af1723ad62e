//! The report as Markdown tables.

use super::*;

/// A Markdown table of the format comparisons ([`Report::formats`]); empty when there are none.
#[must_use]
pub fn formats_table(formats: &[FormatComparison]) -> String {
    if formats.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| workload | run as | characters | pairs | raw sample ms | compressed sample ms | compressed ÷ raw (median of pairs) | check |\n\
         |---|---|---:|---:|---:|---:|---:|---|\n",
    );
    for c in formats {
        s += &format!(
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {} |\n",
            c.workload,
            threads_described(&c.character_threads),
            c.characters,
            c.pairs,
            c.raw_sample_ms,
            c.compressed_sample_ms,
            c.ratio,
            c.check.cell()
        );
    }
    s
}

/// [`CharacterThreads::describe`] of a row's `character_threads`, or the name as it is.
pub(super) fn threads_described(name: &str) -> String {
    CharacterThreads::from_name(name).map_or_else(|| name.to_owned(), |t| t.describe().to_owned())
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.3}"))
}

/// The aim for the fused path's per-character traffic, bytes per joint per frame: the 48-byte
/// palette write plus about 4 bytes of the character's own state amortized over its joints. Since
/// the clock runs as a pass of its own (a thread per character, where inside the fused
/// workgroup it kept 63 threads of 64 waiting), the blend list crosses memory between the two
/// passes, written and read once per character (its head, its layers with a layer on and its
/// samples in use: 64 bytes for one clip, where the whole list was 640). The clock reads the
/// instance's first 64 bytes and the units of its clock in use (16 bytes for one clip, in and
/// out); the fused pass reads the instance's 16-byte header.
pub const PER_CHARACTER_TARGET: f64 = 52.0;

/// The rows as a Markdown table. Each row's per-character traffic is shown against
/// [`PER_CHARACTER_TARGET`] too.
#[must_use]
pub fn markdown_table(rows: &[Row]) -> String {
    let mut s = format!(
        "| workload | clips | path | characters | clock ms | sample ms | local_to_model ms | ik ms | palette ms | GPU ms | frame ms | GPU ms, frame ms with read-back | CPU encode ms | dispatches per page × pages | upload B (1 % edited) | encode ms (1 % edited) | B/joint per-character + shared | per-character vs {PER_CHARACTER_TARGET} | characters/ms | check |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        let pass = |name: &str| ms(r.pass_ms.as_ref().and_then(|p| p.get(name).copied()));
        let path = if r.path == PathKind::CpuAll {
            format!("{} ({} threads)", r.path.name(), r.threads)
        } else if r.path.is_gpu() {
            format!("{}, {}", r.path.name(), threads_described(&r.character_threads))
        } else {
            r.path.name().to_string()
        };
        s += &format!(
            "| {} | {} | {path} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} | {} | {} | {:.1} + {:.1} | {:+.1} | {:.1} | {} |\n",
            r.workload,
            r.clip_format,
            r.characters,
            pass("clock"),
            pass("sample"),
            pass("local_to_model"),
            pass("ik"),
            pass("palette"),
            ms(r.gpu_ms),
            r.frame_ms,
            match r.readback_frame_ms {
                Some(f) => format!("{}, {f:.3}", ms(r.readback_gpu_ms)),
                None => "–".into(),
            },
            ms(r.cpu_encode_ms),
            match (r.dispatches, r.pages) {
                (Some(d), Some(p)) if p > 0 => format!("{} × {p}", d / p),
                _ => "–".into(),
            },
            match (r.upload_bytes, r.edit_upload_bytes) {
                (Some(u), Some(e)) => format!("{u} ({e})"),
                _ => "–".into(),
            },
            ms(r.edit_encode_ms),
            r.bytes_per_joint_per_character,
            r.bytes_per_joint_shared,
            r.bytes_per_joint_per_character - PER_CHARACTER_TARGET,
            r.characters_per_ms,
            r.check.cell(),
        );
    }
    s
}

/// The whole report as Markdown: a line on what was measured, every table that has rows under a
/// sentence saying what it compares, the notes, and what failed its check (or that nothing did).
#[must_use]
pub fn markdown_report(report: &Report) -> String {
    let mut s = format!(
        "One animation frame, medians of {} frames; device: {}{}; {}\n\n",
        report.frames,
        report.device,
        if report.cpu_adapter {
            " (a CPU adapter: its GPU paths run as a thread and as a SIMD group per character)"
        } else {
            ""
        },
        report.date
    );
    s += &markdown_table(&report.rows);
    let sections: [(&str, String); 7] = [
        (
            "The sample pass, raw and compressed clips in alternate frames:",
            formats_table(&report.formats),
        ),
        (
            "The fused and the staged path on one crowd in alternate frames:",
            paths_table(&report.paths),
        ),
        (
            "The state-machine and the single-clip crowd in alternate frames (the machine's cost for the whole frame; goal: at most 1.1):",
            machines_table(&report.machines),
        ),
        (
            "Linear (LBS) and dual-quaternion (DQS) skinning of one single-clip crowd, animated and drawn in alternate frames:",
            skinning_table(&report.skinning),
        ),
        (
            "Morph targets (the morph workload): one single-clip crowd with and without, animated and drawn in alternate frames:",
            morph_table(&report.morph),
        ),
        (
            "The sample pass with a quarter of a locomotion-2d crowd cross-fading, inertializing, or none transitioning, crowd after crowd frame by frame:",
            if report.transitions.is_empty() {
                String::new()
            } else {
                transitions_table(&report.transitions)
            },
        ),
        (
            "The crowd-view workload: a camera framing a tenth of a field of walking mannequins; every pass of a frame, all evaluated against culled (and a tenth as many characters, all evaluated), culled with update-rate LOD, and with vertex animation textures (the draws not timed), in turn frame by frame:",
            if report.culling.is_empty() {
                String::new()
            } else {
                culling_table(&report.culling)
            },
        ),
    ];
    for (title, table) in sections {
        if !table.is_empty() {
            s += &format!("\n{title}\n\n{table}");
        }
    }
    for note in &report.notes {
        s += &format!("\nnote: {note}\n");
    }
    let failures = report.failures();
    if failures.is_empty() {
        s += "\nEvery table passed its checks (timestamps against each frame's wait, the adapter's CPU time and the rows; signs).\n";
    } else {
        s += &format!("\n{} rows FAILED their checks:\n\n", failures.len());
        for f in failures {
            s += &format!("- {f}\n");
        }
    }
    s
}
