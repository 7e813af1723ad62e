//! The report as Markdown tables.

use super::*;

/// A Markdown table of the format comparisons ([`Report::formats`]); empty when there are none.
#[must_use]
pub fn formats_table(formats: &[FormatComparison]) -> String {
    if formats.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| workload | characters | pairs | raw sample ms | compressed sample ms | compressed ÷ raw (median of pairs) |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for c in formats {
        s += &format!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} |\n",
            c.workload, c.characters, c.pairs, c.raw_sample_ms, c.compressed_sample_ms, c.ratio
        );
    }
    s
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.3}"))
}

/// The aim for the fused path's per-character traffic, bytes per joint per frame: the 48-byte
/// palette write plus about 4 bytes of the character's own state amortized over its joints. Since
/// the clock runs as a pass of its own (a thread per character, where inside the fused
/// workgroup it kept 63 threads of 64 waiting), the blend list crosses memory between the two
/// passes, written and read once per character (640 bytes), and both read the instance's first
/// 64 bytes, which the aim did not allow for.
pub const PER_CHARACTER_TARGET: f64 = 52.0;

/// The rows as a Markdown table. Each row's per-character traffic is shown against
/// [`PER_CHARACTER_TARGET`] too.
#[must_use]
pub fn markdown_table(rows: &[Row]) -> String {
    let mut s = format!(
        "| workload | clips | path | characters | clock ms | sample ms | local_to_model ms | palette ms | GPU ms | frame ms | GPU ms, frame ms with read-back | CPU encode ms | dispatches per page × pages | upload B (1 % edited) | encode ms (1 % edited) | B/joint per-character + shared | per-character vs {PER_CHARACTER_TARGET} | characters/ms |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let pass = |name: &str| ms(r.pass_ms.as_ref().and_then(|p| p.get(name).copied()));
        let path = if r.path == PathKind::CpuAll {
            format!("{} ({} threads)", r.path.name(), r.threads)
        } else {
            r.path.name().to_string()
        };
        s += &format!(
            "| {} | {} | {path} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} | {} | {} | {:.1} + {:.1} | {:+.1} | {:.1} |\n",
            r.workload,
            r.clip_format,
            r.characters,
            pass("clock"),
            pass("sample"),
            pass("local_to_model"),
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
        );
    }
    s
}
