//! Culling and update-rate LOD, the mirror of `shaders/shared/culling.wgsl` (which characters a
//! frame draws and evaluates) and of `shaders/cull.wgsl` (the page's lists of them and the
//! indirect dispatch arguments).

use crate::layout::{
    BlendList, CULL_MAX_WORKGROUPS, FRAME_CULL, FRAME_CULL_VIEW, FRAME_VAT, GpuFrame, GpuInstance, GpuOutput,
    GpuVisibleHead, MARK_DRAWN, MARK_ENTERED, MARK_EVALUATE, MARK_RATE_SHIFT, MARK_VAT, WORKGROUP_SIZE, inertia,
    inertia::SWITCH as INERTIA_SWITCH,
};
use crate::math::Affine;
use glam::{Vec3, Vec4};

/// A bound of the largest singular value of `world`'s linear part (how far it stretches a
/// length): the square root of the largest row sum of |AᵀA| (Gershgorin), exact for a rotation
/// times a uniform scale, above it for any other linear part. WGSL `world_stretch`.
#[must_use]
pub fn world_stretch(world: &Affine) -> f32 {
    let c0 = Vec3::new(world.x.x, world.y.x, world.z.x);
    let c1 = Vec3::new(world.x.y, world.y.y, world.z.y);
    let c2 = Vec3::new(world.x.z, world.y.z, world.z.z);
    let (g01, g02, g12) = (c0.dot(c1).abs(), c0.dot(c2).abs(), c1.dot(c2).abs());
    (c0.dot(c0) + g01 + g02)
        .max(c1.dot(c1) + g01 + g12)
        .max(c2.dot(c2) + g02 + g12)
        .sqrt()
}

/// Whether the sphere of `radius` (model units) around the origin of `world` meets the frustum
/// of `planes` ([`crate::layout::frustum_planes`]), the radius stretched by [`world_stretch`].
/// WGSL `sphere_in_view`.
#[must_use]
pub fn sphere_in_view(world: &Affine, radius: f32, planes: &[Vec4; 6]) -> bool {
    let r = radius * world_stretch(world);
    let center = Vec3::new(world.x.w, world.y.w, world.z.w);
    planes.iter().all(|p| p.truncate().dot(center) + p.w >= -r)
}

/// `inst`'s update rate, 1, 2, 4 or 8: its own ([`GpuInstance::update_rate`]), or with a view
/// by its projected size (its bound radius over its centre's clip `w`, in half view heights)
/// against [`GpuFrame::lod`]'s thresholds; else 1. WGSL `update_rate`.
#[must_use]
pub fn update_rate(frame: &GpuFrame, inst: &GpuInstance) -> u32 {
    if inst.update_rate != 0 {
        return inst.update_rate;
    }
    if frame.flags & FRAME_CULL_VIEW == 0 {
        return 1;
    }
    let size = projected_size(frame, inst);
    let mut rate = 1;
    for (threshold, r) in [(frame.lod.x, 2), (frame.lod.y, 4), (frame.lod.z, 8)] {
        if size < threshold {
            rate = r;
        }
    }
    rate
}

/// `inst`'s projected size: its bound radius (stretched by [`world_stretch`]) times the view's
/// projection scale (`frame.lod.w`) over its centre's clip `w`, in half view heights. WGSL
/// `projected_size`.
#[must_use]
pub fn projected_size(frame: &GpuFrame, inst: &GpuInstance) -> f32 {
    let world = &inst.world;
    let w = frame
        .view_w
        .dot(Vec4::new(world.x.w, world.y.w, world.z.w, 1.0))
        .max(1e-6);
    inst.bound_radius * world_stretch(world) * frame.lod.w / w
}

/// Whether `frame` draws `inst`, seen (`drawn`) and its blend list `list`, with its VAT: with
/// [`FRAME_VAT`], when its [`GpuInstance::vat`] names the clip its list plays alone in its base
/// state, no inertialization runs, the frame keeps no state and it is smaller than
/// [`GpuFrame::vat_size`]. WGSL `plays_vat`.
#[must_use]
pub fn plays_vat(frame: &GpuFrame, inst: &GpuInstance, list: &BlendList, drawn: bool) -> bool {
    let s = &list.samples[0];
    frame.flags & FRAME_VAT != 0
        && drawn
        && inst.vat != 0
        && list.count == 1
        && list.inertia == 0
        && s.clip == inst.vat - 1
        && s.layer == 0
        && !keeps_state(list.inertia)
        && projected_size(frame, inst) < frame.vat_size
}

/// Whether this frame of `inst` keeps what its later frames read (the pose and velocity an
/// interrupting transition starts from, or the first frame of an offset decay, `inertia` being
/// its blend list's bits), so that it is evaluated whatever the view. WGSL `keeps_state`.
#[must_use]
pub fn keeps_state(inertia: u32) -> bool {
    inertia & (inertia::KEEP_POSE | inertia::VELOCITY | INERTIA_SWITCH) != 0
}

/// The frame within every 8 on which the character of global index `index` is due: the top three
/// bits of its Fibonacci hash, so that the characters of any rate, however they are spread over
/// the indices, fall evenly on the frames. WGSL `phase`.
#[must_use]
pub fn phase(index: u32) -> u32 {
    index.wrapping_mul(0x9e37_79b1) >> 29
}

/// The marks `frame` gives `inst` (its world as the clock left it, `list` its blend list),
/// instance `i` of the page whose marks last frame were `previous`. Seen: with a view
/// ([`FRAME_CULL_VIEW`]) when its bounds meet it, without one always. [`MARK_VAT`] when it is
/// seen and drawn with its VAT ([`plays_vat`]); else [`MARK_DRAWN`] when seen (with its update
/// rate's base-2 logarithm from [`MARK_RATE_SHIFT`]), and
/// [`MARK_EVALUATE`] when the frame keeps state, or it is drawn and due at its update rate
/// (`(frame + phase(first_instance + i)) mod rate` is 0, [`phase`]) or drawn skinned for the
/// first time since it was not (out of view or drawn with its VAT), [`MARK_ENTERED`] then. What
/// WGSL `mark_evaluation` writes to its output's [`GpuOutput::evaluate`].
#[must_use]
pub fn marks(frame: &GpuFrame, inst: &GpuInstance, i: u32, list: &BlendList, previous: u32) -> u32 {
    let seen = frame.flags & FRAME_CULL_VIEW == 0 || sphere_in_view(&inst.world, inst.bound_radius, &frame.cull_planes);
    if plays_vat(frame, inst, list, seen) {
        return MARK_VAT;
    }
    let drawn = seen;
    let rate = update_rate(frame, inst);
    let due = frame.frame.wrapping_add(phase(frame.first_instance.wrapping_add(i))) & (rate - 1) == 0;
    let entered = drawn && previous & MARK_DRAWN == 0;
    let evaluate = keeps_state(list.inertia) || (drawn && (due || entered));
    (if evaluate { MARK_EVALUATE } else { 0 })
        | (if drawn {
            MARK_DRAWN | rate.trailing_zeros() << MARK_RATE_SHIFT
        } else {
            0
        })
        | if entered { MARK_ENTERED } else { 0 }
}

/// The clip time a VAT draw shows for a character marked [`MARK_VAT`] with blend list `list`:
/// its one sample's. What WGSL `mark_evaluation` writes to [`GpuInstance::vat_time`].
#[must_use]
pub fn vat_time(list: &BlendList) -> f32 {
    list.samples[0].time
}

/// Where a held character, instance `i` of the page, stands between its last two evaluations,
/// in [0, 1): the frames since the last one over its update rate. WGSL `held_fraction`.
#[must_use]
pub fn held_fraction(frame: &GpuFrame, inst: &GpuInstance, i: u32) -> f32 {
    let rate = update_rate(frame, inst);
    (frame.frame.wrapping_add(phase(frame.first_instance.wrapping_add(i))) & (rate - 1)) as f32 / rate as f32
}

/// Workgroups `(x, y, 1)` for `n`, split over `y` past [`CULL_MAX_WORKGROUPS`]. WGSL `groups_for`.
#[must_use]
pub fn groups_for(n: u32) -> [u32; 4] {
    if n <= CULL_MAX_WORKGROUPS {
        return [n, 1, 1, 0];
    }
    let y = n.div_ceil(CULL_MAX_WORKGROUPS);
    [n.div_ceil(y), y, 1, 0]
}

/// A page's lists ([`cull`]), each in page order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lists {
    /// The characters evaluated.
    pub evaluated: Vec<u32>,
    /// The characters drawn skinned.
    pub drawn: Vec<u32>,
    /// The characters drawn with their VAT (on the GPU, from the drawn list's room's last entry
    /// backwards).
    pub vat: Vec<u32>,
    /// Every character's marks ([`GpuOutput::evaluate`]), in page order: what a renderer's vertex
    /// stage reads of them (the skinning module's `wgpu_anim_update_rate`).
    pub marks: Vec<u32>,
}

/// Stage `cull` on a page of `capacity` instances: the lists of the characters marked
/// ([`GpuOutput::evaluate`] of the first `frame.instance_count` outputs) for evaluation, for
/// skinned drawing and for VAT drawing, each in page order, and their head: the counts and the
/// later stages' dispatch arguments, for workgroups of `characters_per_workgroup` characters
/// (WGSL `CHARACTERS_PER_WORKGROUP`: [`crate::gpu::CharacterThreads::characters_per_workgroup`];
/// 0 counts as 1).
#[must_use]
pub fn cull(
    frame: &GpuFrame,
    outputs: &[GpuOutput],
    capacity: u32,
    characters_per_workgroup: u32,
) -> (GpuVisibleHead, Lists) {
    let n = (frame.instance_count as usize).min(outputs.len()) as u32;
    let with = |mark: u32| {
        (0..n)
            .filter(|&i| outputs[i as usize].evaluate & mark != 0)
            .collect::<Vec<u32>>()
    };
    let lists = Lists {
        evaluated: with(MARK_EVALUATE),
        drawn: with(MARK_DRAWN),
        vat: with(MARK_VAT),
        marks: outputs[..n as usize].iter().map(|o| o.evaluate).collect(),
    };
    let (count, drawn_count) = (lists.evaluated.len() as u32, lists.drawn.len() as u32);
    let characters_per_workgroup = characters_per_workgroup.max(1);
    let head = GpuVisibleHead {
        instance_groups: groups_for(count.div_ceil(characters_per_workgroup)),
        thread_groups: groups_for(count.div_ceil(WORKGROUP_SIZE)),
        count,
        drawn_count,
        drawn_offset: capacity,
        vat_count: lists.vat.len() as u32,
        drawn_groups: groups_for(drawn_count.div_ceil(characters_per_workgroup)),
    };
    (head, lists)
}

/// The instances the stages after the clock work on, in order: with [`FRAME_CULL`] the listed
/// ones (`visible`, the evaluated list; none when no list is given), else the first
/// `frame.instance_count`. WGSL `evaluated_count` and `evaluated_instance`.
#[must_use]
pub fn evaluated(frame: &GpuFrame, visible: Option<&[u32]>) -> Vec<usize> {
    if frame.flags & FRAME_CULL != 0 {
        visible.unwrap_or_default().iter().map(|&i| i as usize).collect()
    } else {
        (0..frame.instance_count as usize).collect()
    }
}
