//! The CPU mirror's entry points. Each checks, in what it is given — instances, blend lists,
//! layer definitions, blend nodes, buffer lengths — every index and count the shader follows,
//! then runs the kernel (the shader's body, in the module of the stage's name), which then reads
//! and writes nothing out of bounds. What it refuses is an error naming the instance (its index
//! in `instances`; 0 for a function of one instance) and what is wrong; nothing is written then.
//!
//! The animator's controller never makes what these refuse (it checks the same at its own API);
//! the checks are for data built by hand, as tests and tools do. Each check is one pass over the
//! instances and their blend lists, small beside the work of the stage.

use super::{EventLog, Leaves, SkinnedPoint};
use super::{blend_weights, clock as k_clock, fused as k_fused, local_to_model as k_l2m};
use super::{palette as k_palette, sample as k_sample, skin as k_skin};
use crate::blend::BlendLibrary;
use crate::error::{Error, Result};
use crate::layout::{
    BlendList, GpuBlendNode, GpuClip, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuOutput, GpuSkeleton, LAYER_ON,
    LocalPose, MAX_BLEND_CHILDREN, MAX_BLEND_CLIPS, MAX_FUSED_JOINTS, MAX_LAYERS, MAX_SOCKETS, MAX_TREE_NODES, NO_MASK,
    SNAPSHOT_CLIP, layer_mode, node_kind, source_kind,
};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use crate::mesh::SkinVertex;
use glam::Vec4;

fn instance_error(i: usize, what: String) -> Error {
    Error::Instance { instance: i, what }
}

/// The frame's instance count, when every per-instance buffer holds that many records.
fn instance_count(frame: &GpuFrame, buffers: &[(&str, usize)]) -> Result<usize> {
    let n = frame.instance_count as usize;
    for &(name, len) in buffers {
        if len < n {
            return Err(Error::Limit {
                what: format!("the frame has {n} instances, but {name} holds {len}"),
            });
        }
    }
    Ok(n)
}

/// A pose buffer of `len` entries that the frame's instances (joints up to `end`) read or write
/// in region `region`: from `region · frame.snapshot_offset` on (0: current poses or matrices, 1:
/// snapshots, 2: mesh-space deltas).
fn pose_buffer(frame: &GpuFrame, name: &str, len: usize, region: u64, end: u64) -> Result<()> {
    if end == 0 {
        return Ok(());
    }
    let need = region * u64::from(frame.snapshot_offset) + end;
    if (len as u64) < need {
        return Err(Error::Limit {
            what: format!(
                "{name} holds {len} entries; the frame's joints (up to {end}, capacity {}) need {need}",
                frame.snapshot_offset
            ),
        });
    }
    Ok(())
}

/// Where the joints of `instances` end (0 without any).
fn joint_end(instances: &[GpuInstance]) -> u64 {
    instances
        .iter()
        .map(|i| u64::from(i.joint_offset) + u64::from(i.joint_count))
        .max()
        .unwrap_or(0)
}

/// The palette buffer's socket region: with sockets, `frame.snapshot_offset` on, `MAX_SOCKETS`
/// per instance; and every socket of each instance on one of its first `joint_limit(inst)` joints.
fn socket_room(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    palettes: usize,
    joint_limit: impl Fn(&GpuInstance) -> u32,
) -> Result<()> {
    let mut any = false;
    for (i, inst) in instances.iter().enumerate() {
        let skel = lib.gpu_skeletons()[inst.skeleton as usize];
        let count = skel.socket_count.min(MAX_SOCKETS) as usize;
        let first = (inst.skeleton * MAX_SOCKETS) as usize;
        for (k, socket) in lib.gpu_sockets()[first..first + count].iter().enumerate() {
            if socket.joint >= joint_limit(inst) {
                return Err(instance_error(
                    i,
                    format!(
                        "socket {k} follows joint {}, past the {} joints animated",
                        socket.joint,
                        joint_limit(inst)
                    ),
                ));
            }
        }
        any |= count > 0;
    }
    if any {
        let need = u64::from(frame.snapshot_offset) + instances.len() as u64 * u64::from(MAX_SOCKETS);
        if (palettes as u64) < need {
            return Err(Error::Limit {
                what: format!("the palette buffer holds {palettes} entries; the frame's socket matrices need {need}"),
            });
        }
    }
    Ok(())
}

/// Instance `i`'s skeleton (one of the library's, with at least the instance's joints) and
/// joints (within the frame's joint capacity).
fn joints<'a>(lib: &'a AnimationLibrary, frame: &GpuFrame, i: usize, inst: &GpuInstance) -> Result<&'a GpuSkeleton> {
    let skel = lib.gpu_skeletons().get(inst.skeleton as usize).ok_or_else(|| {
        instance_error(
            i,
            format!(
                "skeleton {} does not exist (the library has {})",
                inst.skeleton,
                lib.gpu_skeletons().len()
            ),
        )
    })?;
    if inst.joint_count > skel.joint_count {
        return Err(instance_error(
            i,
            format!(
                "animates {} joints, but skeleton {} has {}",
                inst.joint_count, inst.skeleton, skel.joint_count
            ),
        ));
    }
    let end = u64::from(inst.joint_offset) + u64::from(inst.joint_count);
    if end > u64::from(frame.snapshot_offset) {
        return Err(instance_error(
            i,
            format!(
                "joints {}..{end} lie beyond the frame's joint capacity ({})",
                inst.joint_offset, frame.snapshot_offset
            ),
        ));
    }
    Ok(skel)
}

fn clip<'a>(lib: &'a AnimationLibrary, i: usize, what: &str, clip: u32) -> Result<&'a GpuClip> {
    lib.clips().get(clip as usize).ok_or_else(|| {
        instance_error(
            i,
            format!(
                "{what}clip {clip} does not exist (the library has {})",
                lib.clips().len()
            ),
        )
    })
}

/// A state `play_state` advances: a clip, or `tree_nodes` blend nodes from `tree_offset`.
fn state(lib: &AnimationLibrary, i: usize, what: &str, c: u32, tree_offset: u32, tree_nodes: u32) -> Result<()> {
    if tree_nodes == 0 {
        return clip(lib, i, what, c).map(|_| ());
    }
    let nodes = lib.blend().nodes.len();
    let end = u64::from(tree_offset) + u64::from(tree_nodes.min(MAX_TREE_NODES));
    if end > nodes as u64 {
        return Err(instance_error(
            i,
            format!("{what}blend nodes {tree_offset}..{end} lie beyond the library's {nodes}"),
        ));
    }
    Ok(())
}

/// What `advance_instance` follows from instance `i`: its clip or tree, its cross-fade's source
/// (unless a snapshot), and the definitions of its layers that are on, with their clips or trees.
fn targets(lib: &AnimationLibrary, layer_defs: &[GpuLayerDef], i: usize, inst: &GpuInstance) -> Result<()> {
    state(lib, i, "", inst.clip, inst.tree_offset, inst.tree_nodes)?;
    let kind = inst.source_kind();
    if kind != source_kind::NONE && kind != source_kind::SNAPSHOT {
        let nodes = if kind == source_kind::TREE {
            inst.source_tree_nodes
        } else {
            0
        };
        state(
            lib,
            i,
            "cross-fade source: ",
            inst.source_clip,
            inst.source_tree_offset,
            nodes,
        )?;
    }
    for k in 0..MAX_LAYERS as usize {
        if inst.flags & (LAYER_ON << k) == 0 {
            continue;
        }
        let d = inst.layers[k].def;
        let def = layer_defs.get(d as usize).ok_or_else(|| {
            instance_error(
                i,
                format!("layer {k}: definition {d} does not exist ({} given)", layer_defs.len()),
            )
        })?;
        state(
            lib,
            i,
            &format!("layer {k}: "),
            def.clip,
            def.tree_offset,
            def.tree_nodes,
        )?;
    }
    Ok(())
}

/// What `sample` follows from instance `i`'s blend list: each sample's clip (with the instance's
/// joints; a snapshot reads the snapshot region, which the buffer check covers), and the mask of
/// each layer that is on (one of the library's masks, over at least the instance's joints).
fn list(lib: &AnimationLibrary, i: usize, joint_count: u32, list: &BlendList) -> Result<()> {
    for (k, e) in list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .enumerate()
    {
        if e.clip == SNAPSHOT_CLIP {
            continue;
        }
        let c = clip(lib, i, &format!("blend list sample {k}: "), e.clip)?;
        if c.joint_count < joint_count {
            return Err(instance_error(
                i,
                format!(
                    "blend list sample {k}: clip {} animates {} joints, the instance {joint_count}",
                    e.clip, c.joint_count
                ),
            ));
        }
    }
    for (k, layer) in list.layers.iter().enumerate() {
        if layer.mode == layer_mode::OFF || layer.mask == NO_MASK {
            continue;
        }
        let fits = lib.masks().iter().any(|m| {
            m.offset == layer.mask
                && lib
                    .gpu_skeletons()
                    .get(m.skeleton as usize)
                    .is_some_and(|s| s.joint_count >= joint_count)
        });
        if !fits {
            return Err(instance_error(
                i,
                format!(
                    "blend list layer {k}: no mask of the library starts at {} with {joint_count} joints",
                    layer.mask
                ),
            ));
        }
    }
    Ok(())
}

/// Stage `clock`: advances each of the frame's instances' clocks by `frame.dt` and writes its
/// blend list. WGSL `clock` (kernel: [`advance_instance`]). For instances without root motion:
/// [`clock_frame`] also keeps root motion (and fires events).
///
/// Errors (nothing written): buffers with fewer records than `frame.instance_count`; an instance
/// whose clip, tree, cross-fade source or layer definition (in `layer_defs`) does not exist.
pub fn clock(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &[GpuInstance],
    clocks: &mut [GpuClock],
    lists: &mut [BlendList],
) -> Result<()> {
    let n = clock_checks(
        lib,
        frame,
        layer_defs,
        instances,
        &[("clocks", clocks.len()), ("blend lists", lists.len())],
    )?;
    let mut scratch = instances[..n].to_vec();
    k_clock::clock(
        lib,
        frame,
        layer_defs,
        &mut scratch,
        clocks,
        lists,
        &mut EventLog::default(),
        None,
    );
    Ok(())
}

/// Everything stage `clock` writes: as [`clock`], and, when `frame.flags` has
/// [`FRAME_EVENTS`](crate::layout::FRAME_EVENTS), every clip event a state of an instance
/// crossed appended to `log` (records name the instance as `frame.first_instance + i`); for
/// instances with [`ROOT_MOTION`](crate::layout::ROOT_MOTION), the frame's root displacement
/// kept in `outputs` and the moved world written to the instance; with float curves in the
/// library ([`FRAME_CURVES`](crate::layout::FRAME_CURVES)), each instance's curves in `outputs`.
///
/// Errors: as [`clock`]; fewer outputs than instances.
#[expect(clippy::too_many_arguments, reason = "the stage's buffers")]
pub fn clock_frame(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &mut [GpuInstance],
    clocks: &mut [GpuClock],
    lists: &mut [BlendList],
    outputs: &mut [GpuOutput],
    log: &mut EventLog,
) -> Result<()> {
    clock_checks(
        lib,
        frame,
        layer_defs,
        instances,
        &[
            ("clocks", clocks.len()),
            ("blend lists", lists.len()),
            ("outputs", outputs.len()),
        ],
    )?;
    k_clock::clock(lib, frame, layer_defs, instances, clocks, lists, log, Some(outputs));
    Ok(())
}

/// The checks of [`clock`]: the instances and the other buffers (`(name, length)`) hold the
/// frame's instances, whose targets exist. Returns the instance count.
fn clock_checks(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &[GpuInstance],
    buffers: &[(&str, usize)],
) -> Result<usize> {
    let mut all = vec![("instances", instances.len())];
    all.extend_from_slice(buffers);
    let n = instance_count(frame, &all)?;
    for (i, inst) in instances[..n].iter().enumerate() {
        targets(lib, layer_defs, i, inst)?;
    }
    Ok(n)
}

/// One instance's frame: its new clock, and its blend list written to `list`. `layer_defs` are
/// the definitions its layers' `def` index. WGSL `advance_instance`.
///
/// Errors: as [`clock`] (the instance is instance 0).
pub fn advance_instance(
    lib: &AnimationLibrary,
    layer_defs: &[GpuLayerDef],
    inst: &GpuInstance,
    clock_in: &GpuClock,
    dt: f32,
    list: &mut BlendList,
) -> Result<GpuClock> {
    targets(lib, layer_defs, 0, inst)?;
    Ok(k_clock::advance_instance(
        lib, layer_defs, inst, clock_in, dt, list, None, None,
    ))
}

/// The clips at the leaves of the `count` blend nodes from `offset` (a tree of the library:
/// `lib.blend().trees[t].node_offset` and `node_count`), with their weights for `params`. WGSL
/// `tree_leaves`.
///
/// Errors: nodes beyond the library's.
pub fn tree_leaves(lib: &AnimationLibrary, offset: u32, count: u32, params: Vec4) -> Result<Leaves> {
    state(lib, 0, "", 0, offset, count.max(1))?;
    Ok(k_clock::tree_leaves(lib, offset, count, params))
}

/// Weights of a node's children (first `child_count` entries; the rest 0) for parameters `params`:
/// see [`blend_weights`](super::blend_weights) for what each kind computes. WGSL
/// `node_child_weights`.
///
/// Errors ([`Error::Limit`]): children or triangles beyond `lib`'s, a triangle naming a child the
/// node does not have, a bilinear node with fewer than 4 children or a triangle node with fewer
/// than 3.
pub fn node_child_weights(lib: &BlendLibrary, node: &GpuBlendNode, params: Vec4) -> Result<[f32; 16]> {
    let fail = |what: String| Err(Error::Limit { what });
    let n = node.child_count.min(MAX_BLEND_CHILDREN);
    let end = u64::from(node.child_offset) + u64::from(n);
    if end > lib.children.len() as u64 {
        return fail(format!(
            "blend node children {}..{end} lie beyond the library's {}",
            node.child_offset,
            lib.children.len()
        ));
    }
    let least = match node.kind {
        node_kind::BILINEAR => 4,
        node_kind::TRIANGLE => 3,
        _ => 0,
    };
    if n > 0 && n < least {
        return fail(format!(
            "a blend node of kind {} needs {least} children, not {n}",
            node.kind
        ));
    }
    if node.kind == node_kind::DELAUNAY && n > 0 {
        let end = u64::from(node.triangle_offset) + u64::from(node.triangle_count);
        let Some(triangles) = lib.triangles.get(node.triangle_offset as usize..end as usize) else {
            return fail(format!(
                "blend node triangles {}..{end} lie beyond the library's {}",
                node.triangle_offset,
                lib.triangles.len()
            ));
        };
        for (k, e) in triangles.iter().enumerate() {
            let used = if e[3] == 0 { &e[..3] } else { &e[..2] };
            if used.iter().any(|&c| c >= n) {
                return fail(format!(
                    "blend node triangle {k} {e:?} names a child past its {n} children"
                ));
            }
        }
    }
    Ok(blend_weights::node_child_weights(lib, node, params))
}

/// Stage `sample`: each of the frame's instances' joints, sampled, blended and layered from its
/// blend list. `local` holds `frame.snapshot_offset` current poses, as many snapshots, then as
/// many mesh-space deltas (the last region only as far as the instances' joints reach). WGSL
/// `sample`.
///
/// Errors (nothing written): buffers too short for the frame; an instance whose skeleton does not
/// exist, whose joints lie beyond the frame's capacity, or whose blend list names a clip that does
/// not exist, has fewer joints, or a mask that is not one of the library's.
pub fn sample(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    lists: &[BlendList],
    local: &mut [LocalPose],
) -> Result<()> {
    let n = instance_count(frame, &[("instances", instances.len()), ("blend lists", lists.len())])?;
    for (i, (inst, l)) in instances[..n].iter().zip(lists).enumerate() {
        joints(lib, frame, i, inst)?;
        list(lib, i, inst.joint_count, l)?;
    }
    pose_buffer(
        frame,
        "the local pose buffer",
        local.len(),
        2,
        joint_end(&instances[..n]),
    )?;
    k_sample::sample(lib, frame, instances, lists, local);
    Ok(())
}

/// Joint `j` of an instance of skeleton `skel` (one of the library's): the base blend, then each
/// layer in order; returns the local pose and the mesh-space rotation delta for
/// `local_to_model`. Snapshot samples read `local[snapshot_slot]`. WGSL `layered_joint`.
///
/// Errors: `skel` is not one of the library's skeletons, `j` is not one of its joints, a sample's
/// clip or a layer's mask does not exist or has fewer joints, a snapshot sample with
/// `snapshot_slot` past the end of `local`.
pub fn layered_joint(
    lib: &AnimationLibrary,
    l: &BlendList,
    skel: &GpuSkeleton,
    j: u32,
    snapshot_slot: u32,
    local: &[LocalPose],
) -> Result<(LocalPose, Vec4)> {
    if !lib.gpu_skeletons().contains(skel) {
        return Err(instance_error(0, "the skeleton is not one of the library's".into()));
    }
    if j >= skel.joint_count {
        return Err(instance_error(
            0,
            format!("joint {j} does not exist (the skeleton has {})", skel.joint_count),
        ));
    }
    list(lib, 0, j + 1, l)?;
    let snapshots = l.samples[..l.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .any(|e| e.clip == SNAPSHOT_CLIP);
    if snapshots && snapshot_slot as usize >= local.len() {
        return Err(instance_error(
            0,
            format!(
                "snapshot slot {snapshot_slot} lies beyond the {} local poses given",
                local.len()
            ),
        ));
    }
    Ok(k_sample::layered_joint(lib, l, skel, j, snapshot_slot, local))
}

/// Joint `j` of `clip` (one of the library's clips) at time `t`. WGSL `sample_joint`.
///
/// Errors: `clip` is not one of the library's, or has no joint `j`.
pub fn sample_joint(lib: &AnimationLibrary, clip: &GpuClip, j: u32, t: f32) -> Result<LocalPose> {
    if !lib.clips().contains(clip) {
        return Err(instance_error(0, "the clip is not one of the library's".into()));
    }
    if j >= clip.joint_count {
        return Err(instance_error(
            0,
            format!("joint {j} does not exist (the clip animates {})", clip.joint_count),
        ));
    }
    Ok(k_sample::sample_joint(lib, clip, j, t))
}

/// Stage `local_to_model`: each of the frame's instances' joints walked parents first into
/// model-space matrices, with mesh-space additive deltas (kept after the snapshots in `local`)
/// applied on the way. WGSL `local_to_model`.
///
/// Errors (nothing written): buffers too short for the frame, an instance whose skeleton does not
/// exist or whose joints lie beyond the frame's capacity.
pub fn local_to_model(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    local: &mut [LocalPose],
    model: &mut [Affine],
) -> Result<()> {
    let n = instance_count(frame, &[("instances", instances.len())])?;
    for (i, inst) in instances[..n].iter().enumerate() {
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(&instances[..n]);
    pose_buffer(frame, "the local pose buffer", local.len(), 2, end)?;
    pose_buffer(frame, "the model pose buffer", model.len(), 0, end)?;
    k_l2m::local_to_model(lib, frame, instances, local, model);
    Ok(())
}

/// Stage `palette`: each of the frame's instances' skinning matrices, `model * inverse_bind`.
/// WGSL `palette`.
///
/// Errors (nothing written): as [`local_to_model`].
pub fn palette(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    model: &[Affine],
    palettes: &mut [Affine],
) -> Result<()> {
    let n = instance_count(frame, &[("instances", instances.len())])?;
    for (i, inst) in instances[..n].iter().enumerate() {
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(&instances[..n]);
    pose_buffer(frame, "the model pose buffer", model.len(), 0, end)?;
    pose_buffer(frame, "the palette buffer", palettes.len(), 0, end)?;
    socket_room(lib, frame, &instances[..n], palettes.len(), |inst| inst.joint_count)?;
    k_palette::palette(lib, frame, instances, model, palettes);
    Ok(())
}

/// Mirror of the `fused` stage: per instance, `advance_instance` (the blend list kept in
/// "workgroup memory", not written to a buffer), then `sample_joints`, `propagate` and
/// `palette_joints` on workgroup memory, as `shaders/fused.wgsl` does. `local` is the local pose
/// buffer (only snapshots are read and written); the clocks and palettes are written. Joints past
/// [`MAX_FUSED_JOINTS`](crate::layout::MAX_FUSED_JOINTS) are not animated (the animator uses the
/// staged path for larger skeletons).
///
/// Errors (nothing written): as [`clock`] and [`local_to_model`]; a blend list the clock makes
/// is then valid. For instances without root motion: [`fused_frame`] also keeps root motion
/// (and fires events).
pub fn fused(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &[GpuInstance],
    clocks: &mut [GpuClock],
    local: &mut [LocalPose],
    palettes: &mut [Affine],
) -> Result<()> {
    let n = fused_checks(
        lib,
        frame,
        layer_defs,
        instances,
        clocks.len(),
        local.len(),
        palettes.len(),
    )?;
    let mut scratch = instances[..n].to_vec();
    k_fused::fused(
        lib,
        frame,
        layer_defs,
        &mut scratch,
        clocks,
        local,
        palettes,
        &mut EventLog::default(),
        None,
    );
    Ok(())
}

/// Everything the `fused` stage writes: as [`fused`], with events and root motion as
/// [`clock_frame`].
///
/// Errors: as [`fused`]; fewer outputs than instances.
#[expect(clippy::too_many_arguments, reason = "the stage's buffers")]
pub fn fused_frame(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &mut [GpuInstance],
    clocks: &mut [GpuClock],
    local: &mut [LocalPose],
    palettes: &mut [Affine],
    outputs: &mut [GpuOutput],
    log: &mut EventLog,
) -> Result<()> {
    instance_count(frame, &[("outputs", outputs.len())])?;
    fused_checks(
        lib,
        frame,
        layer_defs,
        instances,
        clocks.len(),
        local.len(),
        palettes.len(),
    )?;
    k_fused::fused(
        lib,
        frame,
        layer_defs,
        instances,
        clocks,
        local,
        palettes,
        log,
        Some(outputs),
    );
    Ok(())
}

/// The checks of [`fused`]; returns the instance count.
fn fused_checks(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &[GpuInstance],
    clocks: usize,
    local: usize,
    palettes: usize,
) -> Result<usize> {
    let n = instance_count(frame, &[("instances", instances.len()), ("clocks", clocks)])?;
    for (i, inst) in instances[..n].iter().enumerate() {
        targets(lib, layer_defs, i, inst)?;
        joints(lib, frame, i, inst)?;
    }
    let end = joint_end(&instances[..n]);
    pose_buffer(frame, "the local pose buffer", local, 1, end)?;
    pose_buffer(frame, "the palette buffer", palettes, 0, end)?;
    socket_room(lib, frame, &instances[..n], palettes, |inst| {
        inst.joint_count.min(MAX_FUSED_JOINTS)
    })?;
    Ok(n)
}

/// Checks that the palettes at `offset` hold every joint `vertices` name.
fn skinned_joints(palettes: &[Affine], offset: u32, vertices: &[SkinVertex]) -> Result<()> {
    for (k, v) in vertices.iter().enumerate() {
        if let Some(&j) = v.joints.iter().max() {
            if u64::from(offset) + u64::from(j) >= palettes.len() as u64 {
                return Err(Error::Limit {
                    what: format!(
                        "vertex {k} names joint {j}; palettes from {offset} hold {}",
                        palettes.len().saturating_sub(offset as usize)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// One vertex skinned by the palette at `offset`: WGSL `wgpu_anim_skin_matrix_at`, then the
/// point and the normalized normal through it, as the `skin` entry and the built-in renderer do.
///
/// Errors ([`Error::Limit`]): a joint of the vertex past the palettes.
pub fn skin_vertex(palettes: &[Affine], offset: u32, v: &SkinVertex) -> Result<SkinnedPoint> {
    skinned_joints(palettes, offset, std::slice::from_ref(v))?;
    Ok(k_skin::skin_vertex(palettes, offset, v))
}

/// Stage `skin` (compute form): every vertex skinned by the palette at `joint_offset`.
///
/// Errors ([`Error::Limit`]): a vertex naming a joint past the palettes.
pub fn skin(palettes: &[Affine], joint_offset: u32, vertices: &[SkinVertex]) -> Result<Vec<SkinnedPoint>> {
    skinned_joints(palettes, joint_offset, vertices)?;
    Ok(k_skin::skin(palettes, joint_offset, vertices))
}
