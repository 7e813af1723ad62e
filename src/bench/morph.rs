//! A crowd with morph targets against the same crowd without ([`compare_morph`]): the
//! `single-clip` crowd of mannequins, once from a library whose gaits breathe (a morph-weight
//! track each, blended by the sample stage) with every character holding the mannequin's
//! expression at a weight of its own, drawn morphed; once plain. The two are animated and drawn
//! in alternate frames, timed by the wall clock as the skinning comparison is
//! (`bench::compare_skinning`), so that a slow spell of a shared machine falls on both.
//!
//! Where the displacements are summed was chosen by this measurement: in the vertex shader
//! (`wgpu_anim_morph`), each vertex reads its own entry range and, per target that moves it, a
//! weight and the displacements. The alternative, a compute pass writing every character's
//! morphed vertices for the draw to read, is timed too (on the morphed crowd, alone, the draw
//! that would read its output not included): it writes 32 bytes per vertex and character
//! whether or not a target moves the vertex, and must cost less than the vertex path's extra
//! draw time to be worth having.

use super::skinning::{Timing, alternate_frames};
use super::{Check, CrowdOptions, Workload, crowd_with, median};
use crate::error::{Error, Result};
use crate::gpu::wgpu_util::{uniform_buffer_init, wgsl_module};
use crate::gpu::{GpuMorphTargets, SkinBinding, Skinning};
use crate::offline::compress::ClipFormat;
use crate::{Animator, SkinnedMesh, mannequin};
use serde::{Deserialize, Serialize};
use wgpu::util::DeviceExt;

/// The compute pass a renderer could run instead of morphing in its vertex shader: every
/// character's every vertex morphed (the skinning module's `wgpu_anim_morph`) and written out,
/// position and normal, 32 bytes, for a draw to read. Each thread one vertex of one character;
/// the characters in chunks that fit one storage binding.
const MORPH_PASS: &str = r"
struct MorphJob {
    vertex_count: u32,
    first_instance: u32,
    instance_count: u32,
    pad: u32,
}
@group(0) @binding(20) var<uniform> job: MorphJob;
@group(0) @binding(21) var<storage, read> bind_pose: array<vec4<f32>>;
@group(0) @binding(22) var<storage, read_write> morphed: array<vec4<f32>>;

@compute @workgroup_size(64)
fn morph_pass(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = (wg.y * groups.x + wg.x) * 64u + lid;
    let instance = k / job.vertex_count;
    let v = k % job.vertex_count;
    if (instance >= job.instance_count) {
        return;
    }
    let m = wgpu_anim_morph(wgpu_anim_PageInstance(job.first_instance + instance), v, bind_pose[2u * v].xyz, bind_pose[2u * v + 1u].xyz, vec3<f32>(0.0));
    morphed[2u * k] = vec4<f32>(m.position, 1.0);
    morphed[2u * k + 1u] = vec4<f32>(m.normal, 0.0);
}
";

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
    /// The alternative: a compute pass writing every character's morphed vertices (32 bytes
    /// each) for a draw to read, alone (module docs).
    pub compute_pass_ms: f64,
    /// The draw's extra time per character and entry (a moved vertex of an active target), ns.
    pub ns_per_entry: f64,
    /// Bytes the vertex shader reads per vertex to find its entries (its range; the header is
    /// shared).
    pub bytes_per_vertex: u32,
    /// Bytes read per entry whose target weighs something: the position delta and target (16),
    /// the weight (4), the normal delta (16).
    pub bytes_per_entry: u32,
    /// The times' signs ([`Check`]).
    #[serde(default)]
    pub check: Check,
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
        let options = CrowdOptions {
            skinning: Skinning::Linear,
            morph,
            threads: crate::gpu::CharacterThreads::Auto,
        };
        crowds.push(crowd_with(
            device,
            queue,
            n,
            Workload::SingleClip,
            ClipFormat::Raw,
            options,
        )?);
    }
    let skeleton = mannequin::skeleton();
    let mesh = mannequin::mesh(&skeleton);
    let set = mesh.morph_targets.build(mesh.positions.len())?;
    let measured = alternate_frames(device, queue, &mut crowds, &mesh, pairs, warmup)?;
    let ratios = measured[0]
        .iter()
        .zip(&measured[1])
        .map(|(p, m)| m.frame / p.frame.max(1e-9))
        .collect();
    let column = |k: usize, f: fn(&Timing) -> f64| median(measured[k].iter().map(f).collect());
    let (plain_draw_ms, morph_draw_ms) = (column(0, |m| m.draw), column(1, |m| m.draw));
    let entries = set.entry_count() as u32;
    let targets = GpuMorphTargets::new(device, &set)?;
    let compute_pass_ms = time_morph_pass(device, queue, &crowds[1], &mesh, &targets, pairs, warmup)?;
    let ns_per_entry = (morph_draw_ms - plain_draw_ms) * 1e6 / (f64::from(n) * f64::from(entries.max(1)));
    let mut check = Check::default();
    check.positive("the plain draw, ms", plain_draw_ms);
    check.positive("the compute pass, ms", compute_pass_ms);
    check.non_negative("ns per entry", ns_per_entry);
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
        compute_pass_ms,
        ns_per_entry,
        bytes_per_vertex: 16,
        bytes_per_entry: 16 + 4 + 16,
        check,
    })
}

/// Wall time, ms, of [`MORPH_PASS`] over every character of `animator` (drawn with `mesh`,
/// whose morph targets are `targets`): the median of `pairs` submissions after `warmup`.
fn time_morph_pass(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    mesh: &SkinnedMesh,
    targets: &GpuMorphTargets,
    pairs: u32,
    warmup: u32,
) -> Result<f64> {
    let binding = SkinBinding {
        group: 0,
        palette: 0,
        morph: true,
        ..SkinBinding::default()
    };
    let vertices = mesh.positions.len() as u32;
    let bind_pose: Vec<[f32; 4]> = mesh
        .positions
        .iter()
        .zip(&mesh.normals)
        .flat_map(|(p, n)| [p.extend(1.0).to_array(), n.extend(0.0).to_array()])
        .collect();
    // Characters per dispatch: as many as one storage binding holds the output of.
    let per_chunk = (device.limits().max_storage_buffer_binding_size / (u64::from(vertices) * 32)).max(1) as u32;
    let source = format!("{}\n{MORPH_PASS}", binding.wgsl());
    let (pipeline, input, output) = crate::gpu::refusable_now(
        device,
        || "the morph pass the bench compares".to_owned(),
        || {
            let module = wgsl_module(device, "wgpu-anim bench morph pass", &source);
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("wgpu-anim bench morph pass"),
                layout: None,
                module: &module,
                entry_point: Some("morph_pass"),
                compilation_options: Default::default(),
                cache: None,
            });
            let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("bind pose"),
                contents: bytemuck::cast_slice(&bind_pose),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("morphed vertices"),
                size: u64::from(per_chunk) * u64::from(vertices) * 32,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            (pipeline, input, output)
        },
    )?;
    // One bind group per chunk of each page's characters.
    let mut chunks = Vec::new();
    for page in 0..animator.controller().pages_in_use() {
        let (Some(instances), Some(weights)) = (
            animator.page_instance_buffer(page),
            animator.page_morph_weight_buffer(page),
        ) else {
            return Err(Error::Binding {
                what: "the morph pass the bench compares".into(),
                reason: format!("page {page} keeps no morph weights"),
            });
        };
        let count = animator.controller().page_range(page).len() as u32;
        for first in (0..count).step_by(per_chunk as usize) {
            let n = per_chunk.min(count - first);
            let job = uniform_buffer_init(device, "morph job", bytemuck::cast_slice(&[vertices, first, n, 0]));
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-anim bench morph pass"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    bind_entry(binding.instances(), instances),
                    wgpu::BindGroupEntry {
                        binding: binding.morph_weights(),
                        resource: wgpu::BindingResource::Buffer(weights.clone()),
                    },
                    bind_entry(binding.morph_targets(), targets.buffer()),
                    bind_entry(20, &job),
                    bind_entry(21, &input),
                    bind_entry(22, &output),
                ],
            });
            chunks.push((group, n * vertices));
        }
    }
    let max = device.limits().max_compute_workgroups_per_dimension;
    let mut times = Vec::new();
    for k in 0..warmup + pairs {
        let start = std::time::Instant::now();
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            for (group, threads) in &chunks {
                pass.set_bind_group(0, group, &[]);
                let (x, y) = crate::gpu::split_dispatch(threads.div_ceil(64), max);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        if k >= warmup {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(median(times))
}

/// A bind group entry binding all of `buffer` at `binding`.
fn bind_entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn morph_table(rows: &[MorphComparison]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| characters | vertices each | targets | moved vertices (entries) each | pairs | draw ms plain / morph | frame ms plain / morph | morph ÷ plain frame (median of pairs) | ns per entry | B read per vertex / entry | compute pass instead, ms | check |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} | {:.2} | {} / {} | {:.3} | {} |\n",
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
            c.bytes_per_entry,
            c.compute_pass_ms,
            c.check.cell()
        );
    }
    s
}
