//! A ready instanced skinned renderer for users who have none.

use super::Animator;
use super::wgpu_util::{MeshTargets, mesh_pipeline, pipeline_layout, uniform_buffer, uniform_entry, wgsl_module};
use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::id::SkeletonId;
use crate::layout::{Camera, SkinView};
use crate::library::AnimationLibrary;
use crate::mesh::{SkinVertex, SkinnedMesh};
use crate::shaders::{Stage, stage_source_with};
use wgpu::util::DeviceExt;

/// A skinned mesh on the GPU: its vertices ([`SkinVertex`], drawn with [`SkinVertex::LAYOUT`])
/// and its `u32` indices, for [`SkinnedRenderer`] and for pipelines of your own, and the skeleton
/// it is skinned to: the draws that take it ([`super::SkinBinding::draw`],
/// [`super::SkinBinding::draw_visible`]) refuse instances of another skeleton
/// ([`Error::MeshSkeleton`]), whose joints its vertices do not name.
///
/// Made by [`MeshBuffers::new`] only (it has private fields): its skeleton is always the one its
/// vertices were checked against.
pub struct MeshBuffers {
    /// The vertex buffer (`SkinVertex`, 56 bytes each).
    pub vertices: wgpu::Buffer,
    /// The index buffer (`u32`, triangle list).
    pub indices: wgpu::Buffer,
    /// How many indices.
    pub index_count: u32,
    /// The mesh's name.
    name: String,
    /// The skeleton it is skinned to, the skeleton's name and its joint count.
    skeleton: SkeletonId,
    skeleton_name: String,
    joint_count: usize,
}

impl MeshBuffers {
    blocking! {
        /// [`MeshBuffers::new_async`], blocking (native only).
        ///
        /// Errors: as [`MeshBuffers::new_async`].
        pub fn new(
            device: &wgpu::Device,
            library: &AnimationLibrary,
            skeleton: SkeletonId,
            mesh: &SkinnedMesh,
        ) -> Result<Self> = Self::new_async;
    }

    /// Uploads `mesh`, skinned to skeleton `skeleton` of `library` and first validated against it
    /// (so that no vertex names a joint past the end of its character's palette). It keeps the
    /// skeleton: a draw of instances of another skeleton is an error, not spikes. An animator of
    /// another build of the library draws it too where that library has the same skeleton at
    /// the same index (by name and joint count).
    ///
    /// It waits for the device's answer to an error scope around the upload, so it is `async`:
    /// in a browser, `.await` it; natively, [`MeshBuffers::new`] blocks on it (the answer is
    /// there at once).
    ///
    /// Errors: a skeleton of another library ([`Error::ForeignId`]) or one it does not have; a
    /// mesh that does not fit the skeleton ([`SkinnedMesh::validate`]); buffers the device
    /// refuses ([`crate::Error::Refused`]).
    pub async fn new_async(
        device: &wgpu::Device,
        library: &AnimationLibrary,
        skeleton: SkeletonId,
        mesh: &SkinnedMesh,
    ) -> Result<Self> {
        let k = skeleton.check(library.tag())?;
        let Some(of) = library.skeletons().get(k as usize) else {
            return Err(Error::Mesh {
                mesh: mesh.name.clone(),
                what: format!("skinned to skeleton {k}, which the library does not have"),
            });
        };
        let (vertices, indices, index_count) = upload(device, mesh, of.joint_count()).await?;
        Ok(Self {
            vertices,
            indices,
            index_count,
            name: mesh.name.clone(),
            skeleton,
            skeleton_name: of.name().to_owned(),
            joint_count: of.joint_count(),
        })
    }

    /// The skeleton it is skinned to.
    #[must_use]
    pub fn skeleton(&self) -> SkeletonId {
        self.skeleton
    }

    /// The mesh's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the vertex buffer at slot `slot` and the index buffer.
    pub fn bind(&self, pass: &mut wgpu::RenderPass<'_>, slot: u32) {
        pass.set_vertex_buffer(slot, self.vertices.slice(..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
    }

    /// Errors ([`Error::MeshSkeleton`]) when an instance of `animator` in `instances` (those
    /// past the last are not looked at) is of another skeleton than this mesh's, naming the first.
    pub(crate) fn check_instances(&self, animator: &Animator, instances: std::ops::Range<usize>) -> Result<()> {
        let controller = animator.controller();
        let library = controller.library();
        let k = self.skeleton.index();
        let foreign = self.skeleton.library() != library.tag();
        // Another build of the library: its skeleton at the same index, if it is the same.
        let ours = !foreign
            || library
                .skeletons()
                .get(k as usize)
                .is_some_and(|s| s.name() == self.skeleton_name && s.joint_count() == self.joint_count);
        let other = if ours {
            controller.other_skeleton_in(k, instances)
        } else {
            let first = instances.start;
            (first < controller.instance_count()).then(|| (first, controller.instances()[first].skeleton))
        };
        let Some((instance, theirs)) = other else {
            return Ok(());
        };
        let name = library.skeletons().get(theirs as usize).map_or("", |s| s.name());
        let (skeleton, instance_skeleton) = if foreign {
            (
                format!("'{}' ({k}, {})", self.skeleton_name, self.skeleton.library()),
                format!("'{name}' ({theirs}, {})", library.tag()),
            )
        } else {
            (
                format!("'{}' ({k})", self.skeleton_name),
                format!("'{name}' ({theirs})"),
            )
        };
        Err(Error::MeshSkeleton {
            mesh: self.name.clone(),
            skeleton,
            instance,
            instance_skeleton,
        })
    }
}

/// Uploads `mesh`'s vertices and indices, first validated against a skeleton of `joint_count`
/// joints: the vertex buffer, the index buffer and the index count.
pub(crate) async fn upload(
    device: &wgpu::Device,
    mesh: &SkinnedMesh,
    joint_count: usize,
) -> Result<(wgpu::Buffer, wgpu::Buffer, u32)> {
    let mut mesh = mesh.clone();
    mesh.validate(joint_count)?;
    let init = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    super::refusable(
        device,
        || format!("the buffers of mesh '{}'", mesh.name),
        || {
            (
                init(
                    "wgpu-anim skinned vertices",
                    bytemuck::cast_slice(&mesh.gpu_vertices()),
                    wgpu::BufferUsages::VERTEX,
                ),
                init(
                    "wgpu-anim indices",
                    bytemuck::cast_slice(&mesh.indices),
                    wgpu::BufferUsages::INDEX,
                ),
                mesh.indices.len() as u32,
            )
        },
    )
    .await
}

/// Draws every instance of an [`Animator`] that uses one mesh with one instanced draw per page
/// of the animator, skinning in the vertex shader from the page's palette buffer.
pub struct SkinnedRenderer {
    pipeline: wgpu::RenderPipeline,
    /// With an animator that culls: the pipeline of culled draws and their arguments.
    culled: Option<(wgpu::RenderPipeline, super::CulledDraws)>,
    /// Per page: its global instance range and the bind group of its instance and palette buffers.
    pages: Vec<(std::ops::Range<u32>, wgpu::BindGroup)>,
    camera: wgpu::Buffer,
    mesh: MeshBuffers,
    /// The mesh's morph targets, when it has some and the animator keeps room for weights.
    morph: Option<super::GpuMorphTargets>,
    /// Where it draws, for the pipelines made later ([`SkinnedRenderer::set_vat`]).
    targets: MeshTargets,
    /// The mesh's name and vertex count.
    mesh_name: String,
    vertex_count: u32,
    /// With a VAT: what draws the characters the frame plays by it.
    vat: Option<VatDraws>,
}

/// The draws of the characters a culling animator plays by a mesh's VAT.
struct VatDraws {
    pipeline: wgpu::RenderPipeline,
    groups: Vec<wgpu::BindGroup>,
    draws: super::CulledDraws,
    vat: super::GpuVat,
}

impl SkinnedRenderer {
    blocking! {
        /// [`SkinnedRenderer::new_async`], blocking (native only).
        ///
        /// Errors: as [`SkinnedRenderer::new_async`].
        pub fn new(
            device: &wgpu::Device,
            animator: &Animator,
            skeleton: SkeletonId,
            mesh: &SkinnedMesh,
            color_format: wgpu::TextureFormat,
            depth_format: Option<wgpu::TextureFormat>,
            sample_count: u32,
        ) -> Result<Self> = Self::new_async;
    }

    /// A renderer of `mesh`, skinned to skeleton `skeleton` of `animator`'s library (and
    /// validated against it, [`MeshBuffers::new`]), drawing into `color_format` with an optional
    /// depth buffer (`Less` compare) and MSAA `sample_count`. When the mesh has morph targets
    /// ([`SkinnedMesh::morph_targets`]) and the animator keeps room for morph weights
    /// ([`super::AnimatorDesc::morph_weights`]), each character's vertices are morphed by its
    /// weights before they are skinned; without room they are drawn as bound.
    ///
    /// It waits for the device's answer to the error scopes around its buffers, bind groups and
    /// pipeline, so it is `async`: in a browser, `.await` it; natively, [`SkinnedRenderer::new`]
    /// blocks on it (the answer is there at once).
    ///
    /// Errors: a skeleton of another library or a mesh that does not fit the skeleton (as
    /// [`MeshBuffers::new_async`]); buffers, bind groups or a pipeline the device refuses
    /// ([`crate::Error::Refused`]).
    pub async fn new_async(
        device: &wgpu::Device,
        animator: &Animator,
        skeleton: SkeletonId,
        mesh: &SkinnedMesh,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Self> {
        let buffers = MeshBuffers::new_async(device, animator.controller().library(), skeleton, mesh).await?;
        let morph = if animator.controller().morph_room() > 0 && !mesh.morph_targets.targets.is_empty() {
            let set = mesh.morph_targets.build(mesh.positions.len())?;
            Some(super::GpuMorphTargets::new_async(device, &set).await?)
        } else {
            None
        };
        let skin = super::SkinBinding {
            morph: morph.is_some(),
            ..built_in_binding(animator)
        };
        let source = built_in_skin_source(skin)?;
        // Bind groups and the pipeline: what the device refuses is an error.
        super::refusable(
            device,
            || format!("the renderer of mesh '{}'", mesh.name),
            || -> Result<Self> {
                let camera = uniform_buffer(device, "wgpu-anim camera", CAMERA_BYTES);
                // The palette and the instances as a renderer of the user's own binds them.
                let mut entries = vec![camera_entry()];
                entries.extend(skin.layout_entries());
                let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("wgpu-anim render"),
                    entries: &entries,
                });
                let camera_entry = wgpu::BindGroupEntry {
                    binding: 0,
                    resource: camera.as_entire_binding(),
                };
                let groups = match &morph {
                    Some(targets) => skin.morph_bind_groups(device, &layout, animator, targets, &[camera_entry])?,
                    None => skin.bind_groups(device, &layout, animator, &[camera_entry])?,
                };
                // Pages fill in order, each to its capacity (instances added later are drawn too).
                let mut start = 0;
                let pages = groups
                    .into_iter()
                    .enumerate()
                    .map(|(page, bind_group)| {
                        let range = start..start + animator.controller().page_capacity(page);
                        start = range.end;
                        (range, bind_group)
                    })
                    .collect();
                let module = wgsl_module(device, "wgpu-anim skin", &source);
                let pipeline_layout = pipeline_layout(device, "wgpu-anim render", &layout);
                let targets = MeshTargets::new(color_format, depth_format, sample_count);
                let pipeline = |entry| {
                    let label = format!("wgpu-anim skinned {entry}");
                    mesh_pipeline(
                        device,
                        &label,
                        (&module, entry),
                        &pipeline_layout,
                        &[Some(SkinVertex::LAYOUT)],
                        targets,
                    )
                };
                // With culling, a second pipeline draws the evaluated instances, indirectly.
                let culled = if skin.visible {
                    Some((
                        pipeline("vs_visible"),
                        super::CulledDraws::new(device, animator, &buffers)?,
                    ))
                } else {
                    None
                };
                Ok(Self {
                    pipeline: pipeline("vs_main"),
                    culled,
                    pages,
                    camera,
                    mesh: buffers,
                    morph,
                    targets,
                    mesh_name: mesh.name.clone(),
                    vertex_count: mesh.positions.len() as u32,
                    vat: None,
                })
            },
        )
        .await?
    }

    /// Whether it morphs its characters' vertices (its mesh has morph targets and the animator
    /// keeps room for their weights).
    #[must_use]
    pub fn morphs(&self) -> bool {
        self.morph.is_some()
    }

    /// Uploads the camera.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        queue.write_buffer(
            &self.camera,
            std::mem::offset_of!(SkinView, camera) as u64,
            bytemuck::bytes_of(camera),
        );
    }

    /// Tints every character by how the animator animates it this frame (on), or by its own
    /// tint ([`crate::InstanceDesc::tint`], off, the default): blue when its pose is evaluated
    /// every frame, green every 2nd, yellow every 4th and red every 8th frame (update-rate LOD,
    /// [`super::Controller::set_update_rates`]), violet when drawn by its vertex animation texture
    /// ([`SkinnedRenderer::set_vat`]). The rate is the GPU's own decision of the frame (the
    /// skinning module's `wgpu_anim_update_rate`); without culling
    /// ([`super::AnimatorDesc::culling`]) every character is evaluated every frame.
    pub fn set_lod_tint(&self, queue: &wgpu::Queue, on: bool) {
        queue.write_buffer(
            &self.camera,
            std::mem::offset_of!(SkinView, lod_tint) as u64,
            bytemuck::bytes_of(&glam::UVec4::new(u32::from(on), 0, 0, 0)),
        );
    }

    /// With an animator that culls ([`super::AnimatorDesc::culling`]): records the copy of each
    /// page's count of evaluated instances into this renderer's draws
    /// ([`super::CulledDraws::encode`]), for [`SkinnedRenderer::draw_visible`]. Call after
    /// [`Animator::encode`], before the render pass. Without culling it records nothing.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, animator: &Animator) {
        if let Some((_, draws)) = &self.culled {
            draws.encode(encoder, animator);
        }
        if let Some(v) = &self.vat {
            v.draws.encode(encoder, animator);
        }
    }

    blocking! {
        /// [`SkinnedRenderer::set_vat_async`], blocking (native only).
        ///
        /// Errors: as [`SkinnedRenderer::set_vat_async`].
        pub fn set_vat(
            &mut self,
            device: &wgpu::Device,
            animator: &Animator,
            vat: Option<&crate::vat::Vat>,
        ) -> Result<()> = Self::set_vat_async;
    }

    /// From now on [`SkinnedRenderer::draw_visible`] also draws the characters `animator` (a
    /// culling one, this renderer's) plays by a VAT, with `vat`, baked from this renderer's mesh
    /// ([`crate::offline::vat::bake_vat`]): one more indirect draw per page, with no skeleton.
    /// Which characters those are, the animator decides on the GPU: give it the same VAT
    /// ([`super::Controller::set_vat`]) and a size ([`super::Controller::set_vat_size`]). `None`
    /// draws none by a VAT.
    ///
    /// Errors (nothing changes): an animator that does not cull; a VAT of another vertex count
    /// than the mesh, or not of the animator's library ([`super::GpuVat::new_async`]); bind groups
    /// or a pipeline the device refuses ([`crate::Error::Refused`]).
    pub async fn set_vat_async(
        &mut self,
        device: &wgpu::Device,
        animator: &Animator,
        vat: Option<&crate::vat::Vat>,
    ) -> Result<()> {
        let Some(vat) = vat else {
            self.vat = None;
            return Ok(());
        };
        if !animator.controller().culling() {
            return Err(Error::Binding {
                what: format!("the VAT draws of mesh '{}'", self.mesh_name),
                reason: "the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        if vat.vertex_count != self.vertex_count {
            return Err(Error::Mesh {
                mesh: self.mesh_name.clone(),
                what: format!(
                    "has {} vertices, and the VAT '{}' {}",
                    self.vertex_count, vat.mesh, vat.vertex_count
                ),
            });
        }
        let gpu = super::GpuVat::new_async(device, animator.controller().library(), vat).await?;
        let skin = super::SkinBinding {
            vat: true,
            ..built_in_binding(animator)
        };
        let source = built_in_skin_source(skin)?;
        let draws = super::refusable(
            device,
            || format!("the VAT draws of mesh '{}'", self.mesh_name),
            || -> Result<VatDraws> {
                let mut entries = vec![camera_entry()];
                entries.extend(skin.layout_entries());
                let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("wgpu-anim VAT render"),
                    entries: &entries,
                });
                let camera = wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.camera.as_entire_binding(),
                };
                let mesh = super::MeshData {
                    morph_targets: None,
                    vat: Some(&gpu),
                };
                let groups = skin.mesh_bind_groups(device, &layout, animator, mesh, &[camera])?;
                let module = wgsl_module(device, "wgpu-anim VAT", &source);
                let pipeline_layout = pipeline_layout(device, "wgpu-anim VAT render", &layout);
                let pipeline = mesh_pipeline(
                    device,
                    "wgpu-anim VAT vs_vat",
                    (&module, "vs_vat"),
                    &pipeline_layout,
                    &[],
                    self.targets,
                );
                Ok(VatDraws {
                    pipeline,
                    groups,
                    draws: super::CulledDraws::for_vat(device, animator, &self.mesh)?,
                    vat: gpu,
                })
            },
        )
        .await??;
        self.vat = Some(draws);
        Ok(())
    }

    /// The VAT it draws with ([`SkinnedRenderer::set_vat`]).
    #[must_use]
    pub fn vat(&self) -> Option<&super::GpuVat> {
        self.vat.as_ref().map(|v| &v.vat)
    }

    /// Whether it draws culled ([`SkinnedRenderer::draw_visible`]): its animator culls.
    #[must_use]
    pub fn culls(&self) -> bool {
        self.culled.is_some()
    }

    /// Draws every instance `animator` (this renderer's) evaluated this frame: one indirect
    /// instanced draw per page, whatever is seen ([`SkinnedRenderer::encode`] first). Without
    /// culling, every instance ([`SkinnedRenderer::draw`]).
    ///
    /// Errors (nothing recorded): before the animator's first [`Animator::prepare`]
    /// ([`Error::NotPrepared`]); without culling, an instance added after the last `prepare`
    /// ([`Error::NotUploaded`]); an instance of another skeleton than the mesh's
    /// ([`Error::MeshSkeleton`]: every instance of a culling animator is drawn by its mesh).
    pub fn draw_visible(&self, pass: &mut wgpu::RenderPass<'_>, animator: &Animator) -> Result<()> {
        animator.check_prepared(|| "SkinnedRenderer::draw_visible".to_owned())?;
        let Some((pipeline, draws)) = &self.culled else {
            return self.draw(pass, animator, 0..animator.controller().instance_count() as u32);
        };
        self.mesh
            .check_instances(animator, 0..animator.controller().instance_count())?;
        pass.set_pipeline(pipeline);
        let groups = self.pages.iter().map(|(_, g)| g);
        draws.draw(pass, super::SkinBinding::BUILT_IN.group, groups, &self.mesh);
        if let Some(v) = &self.vat {
            pass.set_pipeline(&v.pipeline);
            v.draws
                .draw(pass, super::SkinBinding::BUILT_IN.group, &v.groups, &self.mesh);
        }
        Ok(())
    }

    /// Draws `animator`'s (this renderer's) instances `instances`: one instanced draw per page
    /// they span. With culling, those the frame did not evaluate are drawn in the last pose they
    /// were evaluated in ([`SkinnedRenderer::draw_visible`] draws only the evaluated ones).
    ///
    /// Errors (nothing recorded): before the animator's first [`Animator::prepare`]
    /// ([`Error::NotPrepared`]); an instance in `instances` added after the last `prepare`
    /// ([`Error::NotUploaded`]), or of another skeleton than the mesh's
    /// ([`Error::MeshSkeleton`], naming the first).
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        animator: &Animator,
        instances: std::ops::Range<u32>,
    ) -> Result<()> {
        animator.check_drawable(instances.start as usize..instances.end as usize, || {
            format!("SkinnedRenderer::draw of instances {instances:?}")
        })?;
        self.mesh
            .check_instances(animator, instances.start as usize..instances.end as usize)?;
        if instances.is_empty() {
            return Ok(());
        }
        pass.set_pipeline(&self.pipeline);
        let pages = self.pages.iter().map(|(range, group)| (range.clone(), group));
        super::skinning::draw_pages(pass, super::SkinBinding::BUILT_IN.group, pages, &self.mesh, instances);
        Ok(())
    }
}

/// The built-in renderer's camera uniform: a [`SkinView`], the [`Camera`] then the LOD tint's
/// switch ([`SkinnedRenderer::set_lod_tint`]).
const CAMERA_BYTES: u64 = size_of::<SkinView>() as u64;

/// The camera's layout entry (binding 0) in the built-in renderer's group.
fn camera_entry() -> wgpu::BindGroupLayoutEntry {
    uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT, CAMERA_BYTES)
}

/// Where the built-in renderer places the skinning module for `animator`: with its dual
/// quaternions when it keeps them, rigid where its library has no scale.
pub(crate) fn built_in_binding(animator: &Animator) -> super::SkinBinding {
    super::SkinBinding::BUILT_IN.for_animator(animator)
}

/// The built-in renderer's shader (`shaders/skin.wgsl`), the skinning module placed by `skin`
/// ([`super::SkinBinding::BUILT_IN`] or [`super::SkinBinding::BUILT_IN_DUAL`]).
pub(crate) fn built_in_skin_source(skin: super::SkinBinding) -> Result<String> {
    stage_source_with(Stage::Skin, &skin.stage_defs()).map_err(|reason| Error::Refused {
        what: "the built-in skinning shader".to_owned(),
        reason,
    })
}
