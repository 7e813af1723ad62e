//! A crowd with morph targets against the same crowd without ([`compare_morph`]): the
//! `single-clip` crowd of mannequins, once from a library whose gaits breathe (a morph-weight
//! track each, blended by the sample stage) with every character holding the mannequin's
//! expression at a weight of its own, drawn morphed; once plain. The two are animated and drawn
//! in alternate frames, timed by the wall clock as the skinning comparison is
//! (`bench::compare_skinning`), so that a slow spell of a shared machine falls on both.
//!
//! Where the deltas are summed was chosen by this measurement: in the vertex shader
//! (`wgpu_anim_morph`), each vertex reads its own entry range and, per target that moves it, a
//! weight and the displacements. A compute pass writing morphed vertices per character would
//! instead write and read back at least 24 bytes per vertex and character every frame (position
//! and normal), whether or not a target moves the vertex, plus a dispatch; the measured cost of
//! the vertex path per moved vertex and active target is what such a pass would have to beat.

use super::skinning::{Timing, alternate_frames};
use super::{Workload, crowd_with, median};
use crate::error::Result;
use crate::gpu::Skinning;
use crate::mannequin;
use crate::offline::compress::ClipFormat;
use serde::{Deserialize, Serialize};

/// One crowd size with and without morph targets, in alternate frames (see the module docs).
/// Times are medians over the pairs of wall times, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MorphComparison {
    /// Characters in each crowd (the `single-clip` workload, raw clips).
    pub characters: u32,
    /// Vertices of each character's mesh.
    pub vertices: u32,
    /// Morph targets in use per character (all of the mesh's, each at a non-zero weight).
    pub targets: u32,
    /// Vertices a target moves, summed over the targets: the entries a character's draw reads.
    pub entries: u32,
    /// Pairs of frames measured.
    pub pairs: u32,
    /// The draw without morph targets.
    pub plain_draw_ms: f64,
    /// The draw morphing every character.
    pub morph_draw_ms: f64,
    /// A frame without morph targets: the animation passes and the draw.
    pub plain_frame_ms: f64,
    /// A frame with them (the sample stage blends the weights too).
    pub morph_frame_ms: f64,
    /// Median over the pairs of the morphed frame ÷ the plain one.
    pub ratio: f64,
    /// The draw's extra time per character and entry (a moved vertex of an active target), ns.
    pub ns_per_entry: f64,
    /// Bytes the vertex shader reads per vertex to find its entries (its range; the header is
    /// shared).
    pub bytes_per_vertex: u32,
    /// Bytes read per entry whose target weighs something: the position delta and target (16),
    /// the weight (4), the normal delta (16).
    pub bytes_per_entry: u32,
}

/// Times `n` characters with and without morph targets in alternate frames, `pairs` pairs after
/// `warmup` of each.
///
/// Errors: the device fails, or the animators or renderers cannot be made.
pub fn compare_morph(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    pairs: u32,
    warmup: u32,
) -> Result<MorphComparison> {
    let mut crowds = Vec::with_capacity(2);
    for morph in [false, true] {
        crowds.push(crowd_with(
            device,
            queue,
            n,
            Workload::SingleClip,
            ClipFormat::Raw,
            Skinning::Linear,
            morph,
        )?);
    }
    let skeleton = mannequin::skeleton();
    let mesh = mannequin::mesh(&skeleton);
    let set = mesh.morph_targets.build(mesh.positions.len())?;
    let measured = alternate_frames(device, queue, &mut crowds, &mesh, skeleton.joint_count(), pairs, warmup)?;
    let ratios = measured[0]
        .iter()
        .zip(&measured[1])
        .map(|(p, m)| m.frame / p.frame.max(1e-9))
        .collect();
    let column = |k: usize, f: fn(&Timing) -> f64| median(measured[k].iter().map(f).collect());
    let (plain_draw_ms, morph_draw_ms) = (column(0, |m| m.draw), column(1, |m| m.draw));
    let entries = set.entry_count() as u32;
    Ok(MorphComparison {
        characters: n,
        vertices: mesh.positions.len() as u32,
        targets: set.target_count() as u32,
        entries,
        pairs,
        plain_draw_ms,
        morph_draw_ms,
        plain_frame_ms: column(0, |m| m.frame),
        morph_frame_ms: column(1, |m| m.frame),
        ratio: median(ratios),
        ns_per_entry: (morph_draw_ms - plain_draw_ms) * 1e6 / (f64::from(n) * f64::from(entries.max(1))),
        bytes_per_vertex: 16,
        bytes_per_entry: 16 + 4 + 16,
    })
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn morph_table(rows: &[MorphComparison]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| characters | vertices each | targets | moved vertices (entries) each | pairs | draw ms plain / morph | frame ms plain / morph | morph ÷ plain frame (median of pairs) | ns per entry | B read per vertex / entry |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} | {:.2} | {} / {} |\n",
            c.characters,
            c.vertices,
            c.targets,
            c.entries,
            c.pairs,
            c.plain_draw_ms,
            c.morph_draw_ms,
            c.plain_frame_ms,
            c.morph_frame_ms,
            c.ratio,
            c.ns_per_entry,
            c.bytes_per_vertex,
            c.bytes_per_entry
        );
    }
    s
}
