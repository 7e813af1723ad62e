//! The morph weights' step of the `sample` stage (and of `fused`, which runs it): each
//! instance's weights in use, over the page's weights given by their resource. WGSL: the
//! `MORPH` step of `sample_joints` (`shaders/sample.wgsl`).

use crate::error::{Error, Result};
use crate::layout::{GpuFrame, GpuInstance};
use crate::shaders::Resource;

/// The page's morph weights, when given by their resource ([`crate::cpu::PageBuffers::section`] of
/// [`Resource::MorphWeights`]): the section as `f32`s.
pub(crate) fn morph_section<'s>(sections: &'s mut [(Resource, &mut [u8])]) -> Option<&'s mut [f32]> {
    crate::cpu::page::find_section(sections, Resource::MorphWeights)?.ok()
}

/// The checks of the morph weights' step of `sample` and `fused` ([`sample_morph_weights`]):
/// with a library whose clips drive weights and the page's weights given, they are whole `f32`s
/// and hold every instance's own weights and snapshot.
pub(crate) fn check_morph_section(
    lib: &crate::AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    sections: &[(Resource, &mut [u8])],
) -> Result<()> {
    let Some((_, bytes)) = sections.iter().find(|(r, _)| *r == Resource::MorphWeights) else {
        return Ok(());
    };
    if !lib.has_morph_weights() {
        return Ok(());
    }
    let len = bytemuck::try_cast_slice::<u8, f32>(bytes)
        .map_err(|_| Error::Limit {
            what: format!("the page's morph weights hold {} bytes, not whole f32s", bytes.len()),
        })?
        .len();
    for (i, inst) in instances.iter().enumerate() {
        let end = 2 * u64::from(frame.morph_api_base) + u64::from(inst.morph_offset) + u64::from(inst.morph_count);
        if inst.morph_count > 0 && end > len as u64 {
            return Err(crate::cpu::checks::instance_error(
                i,
                format!(
                    "its morph weights (from {}, {} of them, own and kept {} and {} further on) reach past the page's {len}",
                    inst.morph_offset,
                    inst.morph_count,
                    frame.morph_api_base,
                    2 * frame.morph_api_base
                ),
            ));
        }
    }
    Ok(())
}

/// Instance `inst`'s morph weights in use this frame, with a library whose clips drive weights
/// (the shader's `MORPH`), in the page's `weights`: its own weights (from
/// `frame.morph_api_base` on) blended with its clips' weight tracks and its snapshot (from twice
/// that) as [`crate::cpu::blend_morph_weights`] does, under an inertialized transition mixed in from the
/// snapshot, into the weights the vertex stage reads (from its `morph_offset`); kept as its
/// snapshot on a frame that keeps the pose. WGSL: the `MORPH` step of `sample_joints`
/// (`shaders/sample.wgsl`), which `sample` and `fused` run.
pub(crate) fn sample_morph_weights(
    lib: &crate::AnimationLibrary,
    frame: &GpuFrame,
    inst: &GpuInstance,
    list: &crate::layout::BlendList,
    weights: &mut [f32],
) {
    let (n, base, api) = (
        inst.morph_count as usize,
        inst.morph_offset as usize,
        frame.morph_api_base as usize,
    );
    if n == 0 {
        return;
    }
    let snapshot = 2 * api + base;
    let kept = weights[snapshot..snapshot + n].to_vec();
    let blended = crate::cpu::blend_morph_weights(lib, list, &weights[api + base..api + base + n], &kept);
    let keep_pose = list.inertia & crate::layout::inertia::KEEP_POSE != 0;
    for t in 0..n {
        let w = crate::cpu::inertia::inertia_morph_weight(
            list.inertia,
            list.inertia_time,
            inst.transition_duration,
            kept[t],
            blended[t],
        );
        weights[base + t] = w;
        if keep_pose {
            weights[snapshot + t] = w;
        }
    }
}
