//! The cost follows what is seen ([`compare_culling`]): the `crowd-view` workload, a square
//! field of walking mannequins seen from above by a camera that frames a tenth of its area, played
//! four ways in turn frame by frame (so that a slow spell of a shared machine falls on all of
//! them): every character evaluated; culled against the camera
//! ([`crate::gpu::AnimatorDesc::culling`]); for scale, a crowd of a tenth as many characters all
//! evaluated; culled with update-rate LOD ([`crate::gpu::DEFAULT_UPDATE_RATES`],
//! interpolating); and that with vertex animation textures below [`VAT_SIZE`]. Each frame's
//! animation passes are timed with timestamp queries and summed (the draws are not: a VAT
//! character's cost moves from the passes to the vertex stage, where it replaces skinning); the
//! CPU's encode (prepare, encode, submit: thread time) is timed with the GPU idle.

use super::{Check, Config, median};
use crate::error::{Error, Result};
use crate::gpu::PassTimer;
use crate::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use glam::{Mat4, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// One crowd size of the `crowd-view` workload (module docs). Times are medians over the measured
/// frames, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CullingComparison {
    /// Characters in the field.
    pub characters: u32,
    /// Characters the culled crowd evaluated on its last frame (those whose bounds meet the view).
    pub evaluated: u32,
    /// Frames measured of each crowd.
    pub frames: u32,
    /// GPU time of a frame (every pass), every character evaluated.
    pub all_gpu_ms: f64,
    /// GPU time of a frame, culled.
    pub culled_gpu_ms: f64,
    /// GPU time of a frame of a tenth as many characters, all evaluated.
    pub tenth_gpu_ms: f64,
    /// `culled_gpu_ms ÷ all_gpu_ms`: the goal is 0.15 or less.
    pub culled_ratio: f64,
    /// `culled_gpu_ms ÷ tenth_gpu_ms`: the cost of the seen tenth within the whole field; the goal
    /// is 1.3 or less.
    pub tenth_ratio: f64,
    /// GPU time of a frame culled, with update-rate LOD at [`crate::gpu::DEFAULT_UPDATE_RATES`],
    /// interpolating.
    pub lod_gpu_ms: f64,
    /// `lod_gpu_ms ÷ all_gpu_ms`.
    pub lod_ratio: f64,
    /// GPU time of a frame's animation passes culled, with LOD and vertex animation textures
    /// below [`VAT_SIZE`].
    #[serde(default)]
    pub vat_gpu_ms: f64,
    /// `vat_gpu_ms ÷ all_gpu_ms`.
    #[serde(default)]
    pub vat_ratio: f64,
    /// Characters that crowd drew by VAT on its last frame.
    #[serde(default)]
    pub vat_drawn: u32,
    /// CPU time to prepare, encode and submit a frame, every character evaluated.
    pub all_encode_ms: f64,
    /// The same, culled.
    pub culled_encode_ms: f64,
    /// Dispatches per frame, culled (the same whatever is seen).
    pub culled_dispatches: u32,
    /// The times against a second clock ([`Check`]).
    #[serde(default)]
    pub check: Check,
}

/// Metres between neighbours of the field.
const SPACING: f32 = 2.0;
/// The share of the field's area the camera frames.
pub const VIEW_SHARE: f32 = 0.1;
/// The projected size below which the VAT crowd draws a character by its VAT: the largest of
/// [`crate::gpu::DEFAULT_UPDATE_RATES`], every character update-rate LOD would slow down.
pub const VAT_SIZE: f32 = crate::gpu::DEFAULT_UPDATE_RATES[0];

/// CPU encode frames measured per crowd.
const ENCODE_FRAMES: u32 = 20;

/// The field's side, metres, for `n` characters.
fn side(n: u32) -> f32 {
    (n as f32).sqrt().ceil() * SPACING
}

/// A field of `n` mannequins walking at their own phases, facing every way; culled against
/// `view` when given, with update-rate LOD when `lod`, with `vat` below [`VAT_SIZE`] when given.
pub(super) fn field(
    device: &wgpu::Device,
    n: u32,
    view: Option<Mat4>,
    lod: bool,
    vat: Option<&crate::vat::Vat>,
) -> Result<Animator> {
    let m = mannequin::mannequin();
    let (lib, skeleton, clips) = mannequin::library();
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            culling: view.is_some(),
            lod_interpolation: lod,
            // The field plays no layers: its pages hold no mesh-space deltas.
            layers: false,
            ..AnimatorDesc::default()
        },
    )?;
    let per_row = (n as f32).sqrt().ceil() as u32;
    let half = side(n) / 2.0;
    for i in 0..n {
        let (x, z) = (
            (i % per_row) as f32 * SPACING - half,
            (i / per_row) as f32 * SPACING - half,
        );
        a.controller_mut().add_instance(&InstanceDesc {
            time: (i as f32 * 0.618).fract() * 2.0,
            world: Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), Vec3::new(x, 0.0, z)),
            ..InstanceDesc::new(clips[1])
        })?;
    }
    if view.is_some() {
        let controller = a.controller_mut();
        controller.set_bounds(skeleton, lib.mesh_radius(skeleton, &m.mesh)?)?;
        controller.set_cull_view(view)?;
        if lod {
            controller.set_update_rates(Some(crate::gpu::DEFAULT_UPDATE_RATES))?;
        }
        if let Some(vat) = vat {
            controller.set_vat(skeleton, Some(vat))?;
            controller.set_vat_size(Some(VAT_SIZE))?;
        }
    }
    Ok(a)
}

/// The camera over the middle of the field of `n`, looking straight down, framing
/// [`VIEW_SHARE`] of its area (a square, 60° across).
#[must_use]
pub fn view_of(n: u32) -> Mat4 {
    let framed = side(n) * VIEW_SHARE.sqrt();
    let fov = 60f32.to_radians();
    let height = framed / 2.0 / (fov / 2.0).tan();
    let view = glam::camera::rh::view::look_at_mat4(Vec3::Y * height, Vec3::ZERO, Vec3::NEG_Z);
    glam::camera::rh::proj::directx::perspective(fov, 1.0, 0.1, height + 10.0) * view
}

/// CPU thread time to prepare, encode and submit a frame of `a`, the GPU idle: the median of
/// [`ENCODE_FRAMES`] frames, ms.
fn encode_ms(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) -> Result<f64> {
    Ok(median(super::gpu::encode_times(device, queue, a, ENCODE_FRAMES)?))
}

/// Times the `crowd-view` workload of `n` characters (module docs), `frames` frames of each crowd
/// after `warmup`; `None` without timestamp queries.
///
/// Errors: the device fails, or the animators cannot be made.
pub fn compare_culling(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    frames: u32,
    warmup: u32,
) -> Result<Option<CullingComparison>> {
    let view = view_of(n);
    let (lib, skeleton, _) = mannequin::library();
    let vat = crate::offline::vat::bake_vat(
        &lib,
        skeleton,
        &mannequin::mannequin().mesh,
        &crate::offline::vat::VatDesc::default(),
        |_, _, _| {},
    )?;
    let mut crowds = [
        field(device, n, None, false, None)?,
        field(device, n, Some(view), false, None)?,
        field(device, (n / 10).max(1), None, false, None)?,
        field(device, n, Some(view), true, None)?,
        field(device, n, Some(view), true, Some(&vat))?,
    ];
    let mut timers = Vec::with_capacity(crowds.len());
    for a in &crowds {
        match PassTimer::new(device, queue, a.dispatches_per_page()) {
            Some(t) => timers.push(t),
            None => return Ok(None),
        }
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for frame in 0..warmup + frames {
        for ((a, timer), times) in crowds.iter_mut().zip(&timers).zip(&mut times) {
            let (_, time) = super::gpu::timed_frame(device, queue, a, timer)?;
            if frame >= warmup {
                times.push(time);
            }
        }
    }
    let mut check = Check::default();
    let cpu = super::check::is_cpu_adapter(device);
    for (what, times) in [
        "all evaluated",
        "culled",
        "a tenth",
        "culled with LOD",
        "with LOD and VAT",
    ]
    .into_iter()
    .zip(&times)
    {
        check.frames(&format!("the {what} frame"), times, cpu);
    }
    let [all, culled, tenth, lod, vat_ms] = times.map(|t| median(t.iter().map(|f| f.gpu_ms).collect()));
    let all_encode_ms = encode_ms(device, queue, &mut crowds[0])?;
    let culled_encode_ms = encode_ms(device, queue, &mut crowds[1])?;
    let heads = |a: &Animator| {
        (0..a.controller().pages_in_use())
            .map(|page| a.read_visible_head(device, queue, page))
            .collect::<Result<Vec<_>>>()
    };
    let evaluated = heads(&crowds[1])?.iter().map(|h| h.count).sum();
    let vat_drawn = heads(&crowds[4])?.iter().map(|h| h.vat_count).sum();
    Ok(Some(CullingComparison {
        characters: n,
        evaluated,
        frames,
        all_gpu_ms: all,
        culled_gpu_ms: culled,
        tenth_gpu_ms: tenth,
        culled_ratio: culled / all.max(1e-12),
        tenth_ratio: culled / tenth.max(1e-12),
        lod_gpu_ms: lod,
        lod_ratio: lod / all.max(1e-12),
        vat_gpu_ms: vat_ms,
        vat_ratio: vat_ms / all.max(1e-12),
        vat_drawn,
        all_encode_ms,
        culled_encode_ms,
        culled_dispatches: crowds[1].dispatches_per_frame(),
        check,
    }))
}

/// The `crowd-view` comparisons of `config` ([`compare_culling`]), at most 10 frames each (an
/// all-evaluated frame of 128,000 characters takes seconds on a software adapter); none without
/// timestamp queries.
pub(super) fn compare_all_culling(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: &Config,
    progress: &mut super::Progress,
) -> Result<Vec<CullingComparison>> {
    use super::progress::{Kind, weight};
    let mut out = Vec::new();
    let frames = config.frames.min(10);
    for &n in &config.view_counts {
        progress.step(
            &format!(
                "crowd-view, {n} characters, a tenth seen: all evaluated, culled, a tenth as many ({frames} frames each)"
            ),
            weight(Kind::Culling, n, frames),
        );
        match compare_culling(device, queue, n, frames, config.warmup.max(1)) {
            Ok(Some(c)) => out.push(c),
            Ok(None) => break,
            // A size the device cannot hold.
            Err(Error::Limit { what }) => progress.note(&format!("crowd-view, {n} characters: skipped: {what}")),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The comparisons as a Markdown table.
#[must_use]
pub fn culling_table(rows: &[CullingComparison]) -> String {
    let mut s = String::from(
        "| characters | evaluated (culled) | all evaluated GPU ms | culled GPU ms | a tenth, all evaluated, GPU ms | \
         culled ÷ all | culled ÷ a tenth | culled with LOD GPU ms | with LOD ÷ all | with LOD and VAT GPU ms | \
         with LOD and VAT ÷ all | by VAT | encode ms (all, culled) | dispatches (culled) | check |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n",
    );
    for c in rows {
        s += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.3}, {:.3} | {} | {} |\n",
            c.characters,
            c.evaluated,
            c.all_gpu_ms,
            c.culled_gpu_ms,
            c.tenth_gpu_ms,
            c.culled_ratio,
            c.tenth_ratio,
            c.lod_gpu_ms,
            c.lod_ratio,
            c.vat_gpu_ms,
            c.vat_ratio,
            c.vat_drawn,
            c.all_encode_ms,
            c.culled_encode_ms,
            c.culled_dispatches,
            c.check.cell()
        );
    }
    s
}
