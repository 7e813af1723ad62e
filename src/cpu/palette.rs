//! Mirror of `shaders/palette.wgsl`. The stage's entry point [`palette`] checks what the page
//! holds, then runs [`kernel`].

use super::PageBuffers;
use super::checks::{dual_room, instance_count, joint_end, joints, pose_buffer, socket_room};
use crate::error::Result;
use crate::layout::{
    FRAME_DUAL_QUATERNION, FRAME_LOD_INTERPOLATE, GpuFrame, GpuInstance, MARK_ENTERED, MARK_EVALUATE, MAX_SOCKETS,
    WORKGROUP_SIZE,
};
use crate::library::AnimationLibrary;
use crate::math::{Affine, DualQuat};

/// `model * inverse_bind`. WGSL `skin_matrix`.
#[must_use]
pub fn skin_matrix(model: &Affine, inverse_bind: &Affine) -> Affine {
    model.mul(inverse_bind)
}

/// Instance `inst`'s skinning matrices for joints `lid`, `lid + WORKGROUP_SIZE`, ... below
/// `joint_count`, from the model matrices `model_at(joint_offset, j)` gives (WGSL: the `virtual fn
/// palette_model_at`, the model pose buffer, which `shaders/fused.wgsl` overrides with workgroup
/// memory); and their dual quaternions ([`DualQuat::from_affine`]) in `dual_palettes` when the
/// frame keeps them and the instance skins with them. With
/// [`FRAME_LOD_INTERPOLATE`](crate::layout::FRAME_LOD_INTERPOLATE), each becomes the joint's newer
/// key palette (from `frame.key_base`, two per joint) and the newer the older, and the palette
/// drawn is the older; at rate 1 or on the frame it comes into view (`marks`, its
/// [`MARK_ENTERED`]) the new one, both keys too. WGSL `palette_joints`.
#[expect(
    clippy::too_many_arguments,
    reason = "the WGSL function's inputs, and the buffers it writes"
)]
pub(crate) fn palette_joints(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    inst: &GpuInstance,
    marks: u32,
    lid: u32,
    joint_count: u32,
    model_at: impl Fn(u32, u32) -> Affine,
    (palettes, dual_palettes): (&mut [Affine], &mut [DualQuat]),
) {
    let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
    let dual = frame.flags & FRAME_DUAL_QUATERNION != 0 && inst.dual_quaternion > 0.0;
    let keys = frame.flags & FRAME_LOD_INTERPOLATE != 0;
    let fresh = !keys || marks & MARK_ENTERED != 0 || super::cull::update_rate(frame, inst) == 1;
    let mut j = lid;
    while j < joint_count {
        let slot = (inst.joint_offset + j) as usize;
        let k = skin_matrix(
            &model_at(inst.joint_offset, j),
            &lib.inverse_binds()[(skel.joint_offset + j) as usize],
        );
        let mut shown = k;
        if keys {
            let key = key_slot(frame, slot);
            if !fresh {
                shown = palettes[key + 1];
            }
            palettes[key] = shown;
            palettes[key + 1] = k;
        }
        palettes[slot] = shown;
        if dual {
            dual_palettes[slot] = DualQuat::from_affine(&k);
        }
        j += WORKGROUP_SIZE;
    }
}

/// Palette slot `slot`'s older key palette (the newer after it). WGSL `key_slot`.
fn key_slot(frame: &GpuFrame, slot: usize) -> usize {
    frame.key_base as usize + 2 * slot
}

/// Each element of `a + (b - a) s`. WGSL `affine_lerp`.
#[must_use]
pub fn affine_lerp(a: &Affine, b: &Affine, s: f32) -> Affine {
    Affine {
        x: a.x.lerp(b.x, s),
        y: a.y.lerp(b.y, s),
        z: a.z.lerp(b.z, s),
    }
}

/// A character drawn and not evaluated (instance `i` of the page), with
/// [`FRAME_LOD_INTERPOLATE`](crate::layout::FRAME_LOD_INTERPOLATE): its palette between its two
/// keys, as far as it stands between its evaluations ([`super::cull::held_fraction`]). WGSL
/// `interpolate_joints`.
pub(crate) fn interpolate_joints(
    frame: &GpuFrame,
    inst: &GpuInstance,
    i: u32,
    lid: u32,
    joint_count: u32,
    palettes: &mut [Affine],
) {
    let s = super::cull::held_fraction(frame, inst, i);
    let mut j = lid;
    while j < joint_count {
        let slot = (inst.joint_offset + j) as usize;
        let key = key_slot(frame, slot);
        palettes[slot] = affine_lerp(&palettes[key], &palettes[key + 1], s);
        j += WORKGROUP_SIZE;
    }
}

/// Instance `i`'s socket matrices, one per thread `lid` below its skeleton's socket count: the
/// world matrix times the joint's model matrix (`model_at(joint_offset, j)`, as for
/// [`palette_joints`]) times the socket's offset, at slot `frame.snapshot_offset + i · MAX_SOCKETS
/// + lid` of `palettes`. WGSL `socket_matrices`.
pub(crate) fn socket_matrices(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    i: usize,
    inst: &GpuInstance,
    lid: u32,
    model_at: impl Fn(u32, u32) -> Affine,
    palettes: &mut [Affine],
) {
    let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
    if lid >= skel.socket_count.min(MAX_SOCKETS) {
        return;
    }
    let socket = &lib.gpu_sockets()[(inst.skeleton * MAX_SOCKETS + lid) as usize];
    let model = model_at(inst.joint_offset, socket.joint);
    let slot = frame.snapshot_offset as usize + i * MAX_SOCKETS as usize + lid as usize;
    palettes[slot] = inst.world.mul(&model.mul(&socket.offset));
}

/// The checks of [`palette`]: the instances hold the frame's instances, whose skeletons and
/// joints are valid; the model poses and palettes hold their joints, and the palettes the socket
/// matrices after them.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    let n = instance_count(frame, &[("instances", page.instances.len())])?;
    let instances = &page.instances[..n];
    for (i, inst) in instances.iter().enumerate() {
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(instances);
    pose_buffer(frame, "the model pose buffer", page.model_poses.len(), 0, end)?;
    pose_buffer(frame, "the palette buffer", page.palettes.len(), 0, end)?;
    dual_room(frame, instances, page.dual_palettes.len())?;
    if frame.flags & FRAME_LOD_INTERPOLATE != 0 {
        let need = u64::from(frame.key_base) + 2 * end;
        if (page.palettes.len() as u64) < need {
            return Err(crate::error::Error::Limit {
                what: format!(
                    "the palette buffer holds {} entries; the key palettes of the frame's joints (up to {end}, from {}) need {need}",
                    page.palettes.len(),
                    frame.key_base
                ),
            });
        }
    }
    socket_room(lib, frame, instances, page.palettes.len(), |inst| inst.joint_count)
}

/// Stage `palette`: each of the frame's instances' skinning matrices, `model * inverse_bind`
/// (and, for those that skin with dual quaternions, when the frame keeps them, their dual
/// quaternions), then, when the library has sockets, its socket matrices from
/// `frame.snapshot_offset` on. Binds the page's frame, instances, model poses, palettes and dual
/// palettes. WGSL `palette`.
///
/// Errors (nothing written): as [`local_to_model`](crate::cpu::local_to_model()); palettes with no
/// room for the socket matrices, a socket on a joint past those animated, or (interpolating) the
/// key palettes; dual palettes with no room for the joints of an instance that skins with dual
/// quaternions.
pub fn palette(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// Stage `palette`'s body, unchecked: one workgroup per instance, its threads striding over the
/// joints; the socket matrices after the joints. Interpolating
/// ([`FRAME_LOD_INTERPOLATE`](crate::layout::FRAME_LOD_INTERPOLATE)), over the drawn instances,
/// those held interpolated.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let interpolating = frame.flags & FRAME_LOD_INTERPOLATE != 0;
    let list = if interpolating {
        page.drawn.unwrap_or_default().iter().map(|&i| i as usize).collect()
    } else {
        page.evaluated()
    };
    let marks: Vec<u32> = list
        .iter()
        .map(|&i| page.outputs.as_deref().map_or(MARK_EVALUATE, |o| o[i].evaluate))
        .collect();
    let model = &*page.model_poses;
    let palettes = &mut *page.palettes;
    let dual_palettes = &mut *page.dual_palettes;
    for (i, marks) in list.into_iter().zip(marks) {
        let inst = &page.instances[i];
        if interpolating && marks & MARK_EVALUATE == 0 {
            for lid in 0..WORKGROUP_SIZE {
                interpolate_joints(frame, inst, i as u32, lid, inst.joint_count, palettes);
            }
            continue;
        }
        for lid in 0..WORKGROUP_SIZE {
            palette_joints(
                lib,
                frame,
                inst,
                marks,
                lid,
                inst.joint_count,
                |o, j| model[(o + j) as usize],
                (&mut *palettes, &mut *dual_palettes),
            );
            socket_matrices(lib, frame, i, inst, lid, |o, j| model[(o + j) as usize], palettes);
        }
    }
}
