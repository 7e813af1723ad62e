//! A page: a share of an animator's instances and one buffer for each per-page resource of the
//! binding table ([`Resource::scope`] is [`Scope::Page`]), sized by [`Resource::page_bytes`];
//! and the planning of pages for a crowd within the device's limits. Binding, read-back and
//! rebuild go through [`Page::buffer`], so a new per-page resource needs no code here.

use super::library::GpuLibrary;
use crate::error::{Error, Result};
use crate::shaders::{Resource, Scope, Stage};

/// A stage's pipeline and bind group layout, shared by every page.
pub(super) struct StagePipeline {
    pub stage: Stage,
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
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
    /// Last frame's palettes, kept for motion vectors (`Animator::keep_previous_palettes`).
    pub previous_palette: Option<wgpu::Buffer>,
    /// One per stage of [`Stage::COMPUTE`].
    pub bind_groups: Vec<wgpu::BindGroup>,
    pub fused_bind_group: Option<wgpu::BindGroup>,
}

impl Page {
    /// Allocates page `k`'s buffers for `instances` instances and `joints` joints.
    pub fn new(device: &wgpu::Device, k: usize, instances: u32, joints: u32, sockets: bool) -> Self {
        let buffers = Resource::ALL
            .iter()
            .map(|&r| {
                let bytes = r.page_bytes(instances, joints, sockets)?;
                Some(device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("wgpu-anim page {k} {}", r.name())),
                    size: bytes.max(16),
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
            previous_palette: None,
            bind_groups: Vec::new(),
            fused_bind_group: None,
        }
    }

    /// The page's buffer of `resource`, a per-page resource.
    ///
    /// # Panics
    /// If `resource` is not per page (the crate's own calls name per-page resources only).
    #[must_use]
    pub fn buffer(&self, resource: Resource) -> &wgpu::Buffer {
        self.buffers[resource.binding() as usize]
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not a per-page resource", resource.name()))
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
                (Scope::Frame, _) => return wgpu::BindingResource::Buffer(shared.frame.clone()),
                (Scope::Library, Resource::Library) => shared.library.layout_buffer(),
                (Scope::Library, _) => shared.library.heap(),
                (Scope::Animator, Resource::LayerDefs) => shared.layer_defs,
                // Shared by every page: one log per frame.
                (Scope::Animator, _) => shared.event_log,
                (Scope::Page, _) => self.buffer(resource),
            };
            buffer.as_entire_binding()
        };
        let bind_group = |pass: &StagePipeline| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&format!("wgpu-anim page {k} {}", pass.stage.name())),
                layout: &pass.layout,
                entries: &pass
                    .stage
                    .bindings()
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

/// Bytes per instance of the largest per-instance buffer (one instance, no joints).
fn instance_bytes(sockets: bool) -> u64 {
    page_resources()
        .filter_map(|r| r.page_bytes(1, 0, sockets))
        .max()
        .unwrap_or(0)
}

/// Bytes per joint of the largest per-joint buffer.
fn joint_bytes() -> u64 {
    page_resources()
        .filter_map(|r| r.page_bytes(0, 1, false))
        .max()
        .unwrap_or(0)
}

/// The largest buffer of a page of `instances` instances and `joints` joints.
pub(super) fn largest_buffer(instances: u32, joints: u32, sockets: bool) -> u64 {
    page_resources()
        .filter_map(|r| r.page_bytes(instances, joints, sockets))
        .max()
        .unwrap_or(0)
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
    sockets: bool,
) -> Result<Vec<(u32, u32)>> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    let joints_per_page = (cap / joint_bytes()).min(u64::from(u32::MAX)) as u32;
    if largest > joints_per_page {
        return Err(Error::Limit {
            what: format!(
                "a skeleton of {largest} joints needs {} bytes of local poses; the device allows {cap} per storage buffer",
                u64::from(largest) * joint_bytes()
            ),
        });
    }
    let mut per_page = (cap / instance_bytes(false)).min(u64::from(u32::MAX)) as u32;
    if !joint_budget && largest > 0 {
        per_page = per_page.min(joints_per_page / largest);
        // A buffer of per-instance and per-joint parts (the palettes and the socket matrices).
        let per_instance = largest_buffer(1, largest, sockets);
        per_page = per_page.min((cap / per_instance).min(u64::from(u32::MAX)) as u32);
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
        let bytes = largest_buffer(instances.max(1), joints, sockets);
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
    sockets: bool,
) -> std::result::Result<(), String> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    for (k, &(instances, joints)) in layout.iter().enumerate() {
        let largest = largest_buffer(instances, joints, sockets);
        if largest > cap {
            return Err(format!(
                "page {k} needs a buffer of {largest} bytes; the device allows {cap} per storage buffer"
            ));
        }
    }
    Ok(())
}
