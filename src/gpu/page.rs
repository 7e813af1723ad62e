//! A page: a share of an animator's instances and one buffer for each per-page resource of the
//! binding table ([`Resource::scope`] is [`Scope::Page`]), sized by [`Resource::page_bytes`];
//! and the planning of pages for a crowd within the device's limits. Binding, read-back and
//! rebuild go through [`Page::buffer`], so a new per-page resource needs no code here.

use super::library::GpuLibrary;
use crate::error::{Error, Result};
use crate::shaders::{PageOptions, Resource, Scope, Stage};

/// The least bytes of a page buffer: what the largest binding type needs with one element, a
/// `DualQuat` (64 B) or the visible lists' head and one entry as naga sizes it (rounded to 16
/// bytes: 80 B), so that an empty buffer still binds.
const MIN_PAGE_BUFFER: u64 = {
    let dual = size_of::<crate::math::DualQuat>() as u64;
    let visible = (crate::layout::VISIBLE_LIST_OFFSET + 4).next_multiple_of(16);
    if dual > visible { dual } else { visible }
};

/// A stage's pipeline and bind group layout, shared by every page.
pub(super) struct StagePipeline {
    pub stage: Stage,
    /// What the pipeline binds: [`Stage::bindings`] less what its variant never uses
    /// ([`crate::shaders::StageVariant::bindings`]).
    pub bindings: Vec<(crate::shaders::Resource, crate::shaders::Access)>,
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
    /// The characters a workgroup of it works on (WGSL `CHARACTERS_PER_WORKGROUP`): eight in the
    /// `sample`, `ik`, `palette` and fused passes with `THREAD_PER_CHARACTER`, else one.
    pub characters_per_workgroup: u32,
}

/// What a page's bind groups bind besides its own buffers: the animator's and the library's.
pub(super) struct Shared<'a> {
    pub library: &'a GpuLibrary,
    /// This page's slot of the animator's frame uniform buffer.
    pub frame: wgpu::BufferBinding<'a>,
    pub layer_defs: &'a wgpu::Buffer,
    pub event_log: &'a wgpu::Buffer,
}

/// One page's buffers and its bind group for each pass (what is in it: `PageState`).
pub(super) struct Page {
    /// By [`Resource::binding`]: the page's buffer of each per-page resource.
    buffers: Vec<Option<wgpu::Buffer>>,
    /// What the buffers were sized for: where each section lies ([`Resource::place`]).
    instances: u32,
    joints: u32,
    options: PageOptions,
    /// Last frame's palettes, kept for motion vectors (`Animator::keep_previous_palettes`).
    pub previous_palette: Option<wgpu::Buffer>,
    /// Last frame's dual quaternions, kept beside them when the animator keeps dual quaternions.
    pub previous_dual: Option<wgpu::Buffer>,
    /// One per pass of the staged path ([`Stage::staged`]).
    pub bind_groups: Vec<wgpu::BindGroup>,
    pub fused_bind_group: Option<wgpu::BindGroup>,
}

impl Page {
    /// Allocates page `k`'s buffers for `instances` instances and `joints` joints.
    pub fn new(device: &wgpu::Device, k: usize, instances: u32, joints: u32, options: PageOptions) -> Self {
        let buffers = Resource::ALL
            .iter()
            .map(|&r| {
                let bytes = r.page_bytes(instances, joints, options)?;
                Some(device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("wgpu-anim page {k} {}", r.name())),
                    size: bytes.max(MIN_PAGE_BUFFER),
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST
                        | r.extra_usage(),
                    mapped_at_creation: false,
                }))
            })
            .collect();
        Self {
            buffers,
            instances,
            joints,
            options,
            previous_palette: None,
            previous_dual: None,
            bind_groups: Vec::new(),
            fused_bind_group: None,
        }
    }

    /// The page's buffer of `resource`, a per-page resource: for a section of another
    /// resource's buffer, that buffer ([`Resource::home`]; [`Page::place`] says where in it).
    ///
    /// # Panics
    /// If `resource` is not per page (the crate's own calls name per-page resources only).
    #[must_use]
    pub fn buffer(&self, resource: Resource) -> &wgpu::Buffer {
        self.buffers[resource.home().binding() as usize]
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not a per-page resource", resource.name()))
    }

    /// Where `resource` lies in [`Page::buffer`]: its first byte and its bytes (0 and the whole
    /// buffer for a resource with a buffer of its own).
    #[must_use]
    pub fn place(&self, resource: Resource) -> (u64, u64) {
        resource
            .place(self.instances, self.joints, self.options)
            .unwrap_or((0, 0))
    }

    /// `resource`'s part of the page's buffer as a binding: its section, or its whole buffer.
    #[must_use]
    pub fn binding(&self, resource: Resource) -> wgpu::BufferBinding<'_> {
        if !resource.is_section() {
            return self.buffer(resource).as_entire_buffer_binding();
        }
        let (offset, bytes) = self.place(resource);
        wgpu::BufferBinding {
            buffer: self.buffer(resource),
            offset,
            size: std::num::NonZeroU64::new(bytes),
        }
    }

    /// (Re)makes the page's bind groups, one per pass: each entry of the stage's bindings is
    /// the page's buffer, the animator's or the library's, by the resource's [`Scope`].
    pub fn bind(
        &mut self,
        device: &wgpu::Device,
        k: usize,
        shared: &Shared<'_>,
        passes: &[StagePipeline],
        fused: Option<&StagePipeline>,
    ) {
        let binding_of = |resource: Resource| -> wgpu::BindingResource<'_> {
            let buffer = match (resource.scope(), resource) {
                // Every per-page resource: the page's own buffer, whatever it is.
                (Scope::Page, _) => self.buffer(resource),
                (Scope::Frame, _) => return wgpu::BindingResource::Buffer(shared.frame.clone()),
                (_, Resource::Library) => shared.library.layout_buffer(),
                (_, Resource::Heap) => shared.library.heap(),
                (_, Resource::LayerDefs) => shared.layer_defs,
                // Shared by every page: one log per frame.
                (_, Resource::Events) => shared.event_log,
                (_, r) => unreachable!("{}: a shared resource needs its buffer in page::Shared", r.name()),
            };
            buffer.as_entire_binding()
        };
        let bind_group = |pass: &StagePipeline| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&format!("wgpu-anim page {k} {}", pass.stage.name())),
                layout: &pass.layout,
                entries: &pass
                    .bindings
                    .iter()
                    .map(|&(resource, _)| wgpu::BindGroupEntry {
                        binding: resource.binding(),
                        resource: binding_of(resource),
                    })
                    .collect::<Vec<_>>(),
            })
        };
        let bind_groups = passes.iter().map(bind_group).collect();
        let fused_bind_group = fused.map(bind_group);
        self.bind_groups = bind_groups;
        self.fused_bind_group = fused_bind_group;
    }
}

/// The per-page resources.
fn page_resources() -> impl Iterator<Item = Resource> {
    Resource::ALL.into_iter().filter(|r| r.scope() == Scope::Page)
}

/// The largest buffer of a page of `instances` instances and `joints` joints.
pub(super) fn largest_buffer(instances: u32, joints: u32, options: PageOptions) -> u64 {
    page_resources()
        .filter_map(|r| r.page_bytes(instances, joints, options))
        .max()
        .unwrap_or(0)
}

/// The most instances `n` (at least 0, at most `u32::MAX`) for which `bytes(n)` fits `cap`,
/// `bytes` growing with `n`: a search, since a buffer of sections (the character state's
/// outputs start at a 256-byte boundary) is not a multiple of one instance's bytes.
fn most_within(cap: u64, bytes: impl Fn(u32) -> u64) -> u32 {
    let (mut lo, mut hi) = (0u32, u32::MAX);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if bytes(mid) <= cap { lo = mid } else { hi = mid - 1 }
    }
    lo
}

/// The capacity `(instances, joints)` of each page for `max_instances` instances on a device with
/// `limits`: as many instances per page as fit one storage binding (or `page_instances`), with
/// joints for that many of the largest skeleton (`largest` joints), or `max_joints` (when
/// `joint_budget`) split over the pages.
pub(super) fn page_layout(
    limits: &wgpu::Limits,
    max_instances: u32,
    page_instances: Option<u32>,
    max_joints: u32,
    joint_budget: bool,
    largest: u32,
    options: PageOptions,
) -> Result<Vec<(u32, u32)>> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    let joints_per_page = most_within(cap, |j| largest_buffer(0, j, options));
    if largest > joints_per_page {
        return Err(Error::Limit {
            what: format!(
                "a skeleton of {largest} joints needs {} bytes of local poses; the device allows {cap} per storage buffer",
                largest_buffer(0, largest, options)
            ),
        });
    }
    let mut per_page = most_within(cap, |n| largest_buffer(n, 0, options));
    if !joint_budget && largest > 0 {
        // Buffers of per-instance and per-joint parts (the palettes and the socket matrices).
        per_page = per_page.min(most_within(cap, |n| {
            largest_buffer(n, n.saturating_mul(largest), options)
        }));
    }
    if let Some(p) = page_instances {
        if p == 0 {
            return Err(Error::Limit {
                what: "a page needs room for at least one instance".into(),
            });
        }
        per_page = per_page.min(p);
    }
    let pages = max_instances
        .div_ceil(per_page)
        .max(max_joints.div_ceil(joints_per_page));
    let mut out = Vec::with_capacity(pages as usize);
    let (mut instances_left, mut joints_left) = (max_instances, max_joints);
    for k in 0..pages {
        let instances = instances_left.min(per_page);
        let joints = if joint_budget {
            // An even share of the joint budget, within one binding.
            joints_left.div_ceil(pages - k).min(joints_per_page)
        } else {
            instances * largest
        };
        let bytes = largest_buffer(instances.max(1), joints, options);
        if bytes > cap {
            return Err(Error::Limit {
                what: format!(
                    "page {k}'s largest buffer needs {bytes} bytes; the device allows {cap} per storage buffer"
                ),
            });
        }
        out.push((instances.max(1), joints));
        instances_left -= instances.min(instances_left);
        joints_left -= joints.min(joints_left);
    }
    Ok(out)
}

/// Whether pages of capacities `layout` fit a device with `limits` (each buffer within one
/// storage binding).
pub(super) fn check_pages(
    limits: &wgpu::Limits,
    layout: &[(u32, u32)],
    options: PageOptions,
) -> std::result::Result<(), String> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    for (k, &(instances, joints)) in layout.iter().enumerate() {
        let largest = largest_buffer(instances, joints, options);
        if largest > cap {
            return Err(format!(
                "page {k} needs a buffer of {largest} bytes; the device allows {cap} per storage buffer"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As many instances per page as the character state allows (a clock, an output, a blend
    /// list, a state machine and its parameters each: 64 + 128 + 320 + 64 + 64 bytes, its
    /// sections' starts on 256-byte boundaries, which take the room of one character of the
    /// 128 MiB over 640 bytes), joints for that many of the largest skeleton.
    #[test]
    fn pages_hold_as_many_instances_as_their_largest_buffer_allows() {
        let limits = wgpu::Limits::default();
        let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let by_state = (cap / 640) as u32 - 1;
        let state = |n| {
            Resource::CharacterState
                .page_bytes(n, 1, PageOptions::default())
                .unwrap()
        };
        assert!(state(by_state) <= cap && state(by_state + 1) > cap);
        // Pages of `by_state` instances, then the rest.
        let full = |total: u32| {
            let mut pages = vec![by_state; (total / by_state) as usize];
            pages.push(total % by_state);
            pages
        };
        // One-joint characters: the character state bounds the page.
        let pages = page_layout(&limits, 500_000, None, 500_000, false, 1, PageOptions::default()).unwrap();
        assert_eq!(pages, full(500_000).iter().map(|&n| (n, n)).collect::<Vec<_>>());
        // A joint budget: instances alone bound the pages.
        let pages = page_layout(&limits, 1_000_000, None, 1_000_000, true, 1, PageOptions::default()).unwrap();
        assert_eq!(pages.iter().map(|p| p.0).collect::<Vec<_>>(), full(1_000_000));
        // Sixty-joint characters with sockets and layers: the local poses (the pose and the
        // mesh-space delta, 96 B per joint) bound the page; without layers the palettes (48 B
        // per joint and the socket matrices, 48 B each) do, the pose history beside them
        // holding the snapshots (48 B per joint).
        let socket_bytes = crate::layout::MAX_SOCKETS as u64 * 48;
        for (layers, bytes) in [(true, 60 * 96), (false, 60 * 48 + socket_bytes)] {
            let sockets = PageOptions {
                sockets: true,
                dual_quaternion: false,
                morph_weights: 0,
                inertialization: false,
                culling: false,
                lod_interpolation: false,
                layers,
            };
            let pages = page_layout(&limits, 100_000, None, 6_000_000, false, 60, sockets).unwrap();
            let per_page = (cap / bytes) as u32;
            assert_eq!(pages[0], (per_page, per_page * 60), "layers {layers}");
            for &(n, j) in &pages {
                assert!(largest_buffer(n, j, sockets) <= cap);
            }
        }
        assert!(page_layout(&limits, 10, Some(0), 10, false, 1, PageOptions::default()).is_err());
    }

    /// The mannequin's pages under WebGPU's default limits, as the guides give them: every
    /// per-joint buffer 48 B per joint without layers (52,758 characters to a page, 3 pages for
    /// 128,000), the local poses 96 B with them (26,379, 5 pages).
    #[test]
    fn mannequin_pages_under_default_limits() {
        let limits = wgpu::Limits::default();
        for (layers, per_page, pages) in [(false, 52_758, 3), (true, 26_379, 5)] {
            let options = PageOptions {
                layers,
                culling: true,
                ..PageOptions::default()
            };
            let layout = page_layout(&limits, 128_000, None, 128_000 * 53, false, 53, options).unwrap();
            assert_eq!((layout[0].0, layout.len()), (per_page, pages), "layers {layers}");
        }
    }

    #[test]
    fn every_per_page_resource_has_a_size_and_no_other_does() {
        for r in Resource::ALL {
            let options = PageOptions {
                sockets: true,
                dual_quaternion: true,
                morph_weights: 8,
                inertialization: false,
                culling: false,
                lod_interpolation: false,
                layers: true,
            };
            assert_eq!(
                r.page_bytes(1, 1, options).is_some(),
                r.scope() == Scope::Page && !r.is_section(),
                "{r:?}"
            );
            assert_eq!(r.place(1, 1, options).is_some(), r.scope() == Scope::Page, "{r:?}");
        }
    }
}
