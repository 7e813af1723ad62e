//! Linear blend skinning against dual-quaternion skinning on the same crowd ([`compare_skinning`]):
//! two crowds of the same characters, one skinned linearly on an animator without dual
//! quaternions, one with them, animated and drawn in alternate frames with the built-in renderer,
//! so that a slow spell of a shared machine falls on both. Each part is a submission of its own,
//! timed by the wall clock from recording to the GPU's finish (on lavapipe timestamp queries
//! read near zero for compute passes submitted this way, so they are not used): the animation
//! frame, the palette pass again on its own (it writes the dual quaternions too) and the draw
//! (where the vertex shader skins). The frame is the animation and the draw; the ratio is the
//! median of each pair's. On a GPU the wall clock adds the submission's latency to each part.

use super::{Check, DT, Workload, crowd_skinned, median};
use crate::error::{Error, Result};
use crate::gpu::{Camera, OffscreenTarget, SkinnedRenderer, Skinning, scene_pass};
use crate::math::{Affine, DualQuat};
use crate::offline::compress::ClipFormat;
use crate::shaders::Stage;
use crate::{Animator, mannequin};
use serde::{Deserialize, Serialize};

/// The offscreen picture the crowds are drawn into.
const WIDTH: u32 = 960;
const HEIGHT: u32 = 540;

/// One crowd size skinned both ways, in alternate frames (see the module docs). Times are
/// medians over the pairs of wall times, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkinningComparison {
    /// Characters in each crowd (the `single-clip` workload, raw clips).
    pub characters: u32,
    /// Vertices of each character's mesh.
    pub vertices: u32,
    /// Pairs of frames measured.
    pub pairs: u32,
    /// The palette pass, linear.
    pub linear_palette_ms: f64,
    /// The palette pass writing dual quaternions too.
    pub dual_palette_ms: f64,
    /// The draw, linear blend skinning in the vertex shader.
    pub linear_draw_ms: f64,
    /// The draw, dual-quaternion skinning in the vertex shader.
    pub dual_draw_ms: f64,
    /// A linear frame: the animation passes and the draw.
    pub linear_frame_ms: f64,
    /// A dual-quaternion frame.
    pub dual_frame_ms: f64,
    /// Median over the pairs of the dual-quaternion frame ÷ the linear one.
    pub ratio: f64,
    /// Bytes the palette pass writes per joint, linear: one `Affine`.
    pub linear_palette_bytes_per_joint: u32,
    /// Bytes the palette pass writes per joint with dual quaternions: an `Affine` and a `DualQuat`.
    pub dual_palette_bytes_per_joint: u32,
    /// Bytes the vertex shader reads per influence, linear: an `Affine`.
    pub linear_bytes_per_influence: u32,
    /// Bytes the vertex shader reads per influence with dual quaternions: a `DualQuat` (64), or
    /// its rotation and translation (32) for a library without scale (`SkinBinding::rigid`).
    pub dual_bytes_per_influence: u32,
    /// The times' signs ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

/// Where character `i` of `n` stands: a square grid 1.5 m apart, centred on the origin.
fn grid(i: u32, n: u32) -> glam::Mat4 {
    let side = (n as f32).sqrt().ceil().max(1.0);
    let (x, z) = ((i as f32 % side), (i as f32 / side).floor());
    glam::Mat4::from_translation(glam::Vec3::new(x - 0.5 * side, 0.0, z - 0.5 * side) * 1.5)
}

/// Times `n` characters skinned linearly and with dual quaternions in alternate frames, `pairs`
/// pairs after `warmup` of each.
///
/// Errors: the device fails, or the animators or renderers cannot be made.
pub fn compare_skinning(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    pairs: u32,
    warmup: u32,
) -> Result<SkinningComparison> {
    let ways = [Skinning::Linear, Skinning::DualQuaternion];
    let mut crowds: Vec<Animator> = Vec::with_capacity(2);
    for skinning in ways {
        crowds.push(crowd_skinned(
            device,
            queue,
            n,
            Workload::SingleClip,
            ClipFormat::Raw,
            skinning,
        )?);
    }
    let (lib, skeleton, _) = mannequin::library();
    let skeleton = &lib.skeletons()[skeleton.index() as usize];
    let mesh = mannequin::mesh(skeleton);
    let measured = alternate_frames(device, queue, &mut crowds, &mesh, pairs, warmup)?;
    let ratios = measured[0]
        .iter()
        .zip(&measured[1])
        .map(|(l, d)| d.frame / l.frame.max(1e-9))
        .collect();
    let column = |k: usize, f: fn(&Timing) -> f64| median(measured[k].iter().map(f).collect());
    let (affine, dual) = (size_of::<Affine>() as u32, size_of::<DualQuat>() as u32);
    // The vertex shader reads a whole `DualQuat` per influence, or its rigid half (real and dual,
    // 32 bytes) where the library has no scale.
    let read = if crowds[1].controller().library().has_scale() {
        dual
    } else {
        2 * 16
    };
    let mut check = Check::default();
    for (k, way) in ["linear", "dual-quaternion"].into_iter().enumerate() {
        check.positive(&format!("the {way} palette pass, ms"), column(k, |m| m.palette));
        check.positive(&format!("the {way} draw, ms"), column(k, |m| m.draw));
    }
    Ok(SkinningComparison {
        characters: n,
        vertices: mesh.positions.len() as u32,
        pairs,
        linear_palette_ms: column(0, |m| m.palette),
        dual_palette_ms: column(1, |m| m.palette),
        linear_draw_ms: column(0, |m| m.draw),
        dual_draw_ms: column(1, |m| m.draw),
        linear_frame_ms: column(0, |m| m.frame),
        dual_frame_ms: column(1, |m| m.frame),
        ratio: median(ratios),
        linear_palette_bytes_per_joint: affine,
        dual_palette_bytes_per_joint: affine + dual,
        linear_bytes_per_influence: affine,
        dual_bytes_per_influence: read,
        check,
    })
}

/// One frame of one crowd, timed by the wall clock (ms): the palette pass alone, the draw, and
/// the frame (the animation passes and the draw).
#[derive(Clone, Copy, Debug)]
pub(super) struct Timing {
    pub palette: f64,
    pub draw: f64,
    pub frame: f64,
}

/// Animates and draws `crowds` (of `mesh`'s characters, the skeleton of each crowd's first
/// instance) in alternate frames,
/// each part a submission of its own waited for (see the module docs): `pairs` frames each
/// after `warmup`, on a grid seen from above.
pub(super) fn alternate_frames(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    crowds: &mut [Animator],
    mesh: &crate::SkinnedMesh,
    pairs: u32,
    warmup: u32,
) -> Result<Vec<Vec<Timing>>> {
    let n = crowds.first().map_or(0, |a| a.controller().instance_count() as u32);
    for a in crowds.iter_mut() {
        for i in 0..n {
            a.controller_mut().set_world(i as usize, grid(i, n))?;
        }
    }
    let target = OffscreenTarget::new(device, WIDTH, HEIGHT)?;
    let views = [&target.color, &target.depth].map(|t| t.create_view(&Default::default()));
    let extent = 1.5 * (n as f32).sqrt().max(2.0);
    let camera = Camera::look_at(
        glam::Vec3::new(0.0, 0.8 * extent, 0.9 * extent),
        glam::Vec3::ZERO,
        0.8,
        WIDTH as f32 / HEIGHT as f32,
        0.1,
        10.0 * extent,
    );
    let mut renderers = Vec::with_capacity(crowds.len());
    for a in crowds.iter() {
        let skeleton = a
            .controller()
            .instances()
            .first()
            .and_then(|i| a.controller().library().skeleton_at(i.skeleton))
            .ok_or_else(|| Error::Limit {
                what: "a crowd of no characters to draw".to_owned(),
            })?;
        let r = SkinnedRenderer::new(
            device,
            a,
            skeleton,
            mesh,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
        )?;
        r.set_camera(queue, &camera);
        renderers.push(r);
    }
    // Wall time of recording, submitting and finishing `record`'s commands, ms.
    let timed = |record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<()>| -> Result<f64> {
        let start = std::time::Instant::now();
        let mut encoder = device.create_command_encoder(&Default::default());
        record(&mut encoder)?;
        queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    };
    let sky = wgpu::Color {
        r: 0.55,
        g: 0.62,
        b: 0.7,
        a: 1.0,
    };
    let mut measured = vec![Vec::new(); crowds.len()];
    for frame in 0..warmup + pairs {
        for (k, a) in crowds.iter_mut().enumerate() {
            // The animation frame, the palette pass again on its own, then the draw: each a
            // submission of its own, waited for.
            a.prepare(queue, DT);
            let animation = timed(&mut |e| a.encode(e))?;
            let palette = timed(&mut |e| a.encode_stage(e, Stage::Palette))?;
            let draw = timed(&mut |e| {
                let mut pass = scene_pass(e, &views[0], &views[1], sky);
                renderers[k].draw(&mut pass, a, 0..n)
            })?;
            if frame >= warmup {
                measured[k].push(Timing {
                    palette,
                    draw,
                    frame: animation + draw,
                });
            }
        }
    }
    Ok(measured)
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn skinning_table(rows: &[SkinningComparison]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| characters | vertices each | pairs | palette pass ms LBS / DQS | draw ms LBS / DQS | frame ms LBS / DQS | DQS ÷ LBS frame (median of pairs) | palette B written per joint LBS / DQS | B read per influence LBS / DQS | check |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} | {} / {} | {} / {} | {} |\n",
            c.characters,
            c.vertices,
            c.pairs,
            c.linear_palette_ms,
            c.dual_palette_ms,
            c.linear_draw_ms,
            c.dual_draw_ms,
            c.linear_frame_ms,
            c.dual_frame_ms,
            c.ratio,
            c.linear_palette_bytes_per_joint,
            c.dual_palette_bytes_per_joint,
            c.linear_bytes_per_influence,
            c.dual_bytes_per_influence,
            c.check.cell()
        );
    }
    s
}
