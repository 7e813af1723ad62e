//! What an animator holds, for a renderer or a pass of your own: its buffers, by page (reading
//! them back is `read_back/`'s).

use super::animator::Animator;
use crate::layout::outputs_offset;
use crate::shaders::Resource;

// Buffers a renderer or a pass of its own binds: each page's palettes, poses, instances and
// character state.
impl Animator {
    /// The palette buffer of the first page (every instance's, when the animator has one page):
    /// 3×4 skinning matrices (`Affine`, 48 bytes), instance `i`'s joints at
    /// `instances()[i].joint_offset`. Usage: STORAGE | VERTEX | COPY_SRC | COPY_DST. With more
    /// pages, see [`Animator::page_palette_buffer`].
    #[must_use]
    pub fn palette_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::Palettes)
    }

    /// The palette buffer of page `page` (its instances' `joint_offset`s index it; with sockets,
    /// [`Animator::socket_slot`] says where each socket matrix is).
    #[must_use]
    pub fn page_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages().get(page).map(|p| p.buffer(Resource::Palettes))
    }

    /// Page `page`'s previous-frame palettes (laid out as its palettes), when they are kept
    /// ([`Animator::keep_previous_palettes`]).
    #[must_use]
    pub fn page_previous_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages().get(page).and_then(|p| p.previous_palette.as_ref())
    }

    /// Page `page`'s dual quaternions (`math::DualQuat` per joint, instance `i`'s joints from
    /// its `joint_offset`, as in its palettes), when the animator keeps them
    /// ([`super::AnimatorDesc::dual_quaternion`]): written each frame for the joints of the
    /// instances that skin with them. A section of the page's palette buffer
    /// ([`crate::shaders::Resource::DualPalettes`]): bind it as given (the offset is a multiple
    /// of 256 bytes, WebGPU's default storage offset alignment).
    #[must_use]
    pub fn page_dual_palette_buffer(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        self.pages()
            .get(page)
            .filter(|_| self.controller().dual_quaternion())
            .map(|p| p.binding(Resource::DualPalettes))
    }

    /// Page `page`'s morph weights (`f32`, [`super::AnimatorDesc::morph_weights`] per instance,
    /// instance `i` of the page from `i` times that), when the animator keeps room for them:
    /// what the skinning module's `wgpu_anim_morph` reads ([`super::SkinBinding::morph`]). A
    /// section of the page's character state ([`crate::shaders::Resource::MorphWeights`],
    /// whose first third this binding covers): bind it as given (the offset is a multiple of
    /// 256 bytes).
    #[must_use]
    pub fn page_morph_weight_buffer(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        self.pages()
            .get(page)
            .filter(|_| self.controller().morph_room() > 0)
            .map(|p| {
                let mut binding = p.binding(Resource::MorphWeights);
                // The weights drawn: the first of the section's three parts.
                binding.size = binding.size.and_then(|s| std::num::NonZeroU64::new(s.get() / 3));
                binding
            })
    }

    /// Page `page`'s state machine parameter slots ([`crate::machine`]): 16 32-bit slots per
    /// instance, instance `i` of the page at `i · 16`, each an `f32`, an `i32` or 0/1 by its
    /// parameter's kind (slot `k` is parameter `k` of the instance's machine:
    /// [`crate::machine::MachineLibrary::parameter`]). A compute pass of your own may write them
    /// before the animator's passes (GPU crowd logic: steering, perception): encode it first in
    /// the frame's encoder, or submit it first. Declare it as
    ///
    /// ```wgsl
    /// @group(0) @binding(0) var<storage, read_write> machine_parameters: array<array<u32, 16>>;
    /// // A float parameter: machine_parameters[i][k] = bitcast<u32>(value);
    /// ```
    ///
    /// Writes of the controller ([`super::Controller::set_parameter`]) land when the frame is
    /// prepared, before any pass of it: a pass that writes a slot wins over them. The clock pass
    /// clears the triggers the transitions it fires consume. A section of the page's character
    /// state ([`crate::shaders::Resource::MachineParameters`]): bind it as given (its offset is a
    /// multiple of 256 bytes). `None` for a page that does not exist.
    #[must_use]
    pub fn page_machine_parameter_buffer(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        self.pages().get(page).map(|p| p.binding(Resource::MachineParameters))
    }

    /// Page `page`'s state machines as they run ([`crate::layout::GpuMachineState`], 64 bytes
    /// per instance, WGSL `MachineState` of the `wgpu_anim::types` module): what a pass of your
    /// own may read after the animator's passes (the state playing, its normalized time, the
    /// transition running). Write it only through the controller. A section of the page's
    /// character state ([`crate::shaders::Resource::MachineStates`]). `None` for a page that does
    /// not exist.
    #[must_use]
    pub fn page_machine_state_buffer(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        self.pages().get(page).map(|p| p.binding(Resource::MachineStates))
    }

    /// Page `page`'s list of the instances the frame evaluated, when the animator culls
    /// ([`super::AnimatorDesc::culling`]): a [`crate::layout::GpuVisibleHead`] (the later stages'
    /// indirect dispatch arguments and the count, at
    /// [`crate::layout::VISIBLE_COUNT_OFFSET`]) then a `u32` page index each, from
    /// [`crate::layout::VISIBLE_LIST_OFFSET`]. What the skinning module's
    /// `wgpu_anim_visible_instance` reads ([`super::SkinBinding::visible`]); also an
    /// `INDIRECT` buffer.
    #[must_use]
    pub fn page_visible_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages()
            .get(page)
            .filter(|_| self.controller().culling())
            .map(|p| p.buffer(Resource::Visible))
    }

    /// Page `page`'s previous-frame dual quaternions (laid out as its dual quaternions), when
    /// both previous palettes and dual quaternions are kept.
    #[must_use]
    pub fn page_previous_dual_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages().get(page).and_then(|p| p.previous_dual.as_ref())
    }

    /// The instance buffer of the first page (`GpuInstance` per instance).
    #[must_use]
    pub fn instance_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::Instances)
    }

    /// The instance buffer of page `page` (instance `page_range(page).start + k` at `k`).
    #[must_use]
    pub fn page_instance_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages().get(page).map(|p| p.buffer(Resource::Instances))
    }

    /// The character state buffer of the first page, written by `clock` (and `fused`): its
    /// clocks (`GpuClock` per instance) from byte 0, its outputs from
    /// [`Animator::page_outputs`]. The same buffer as [`Animator::output_buffer`].
    #[must_use]
    pub fn clock_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::CharacterState)
    }

    /// The character state buffer of the first page, whose outputs (`GpuOutput` per instance:
    /// root motion, float curves) a shader of your own may read (a blend-shape weight, a
    /// foot-plant flag): bind [`Animator::page_outputs`], the outputs section alone.
    #[must_use]
    pub fn output_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::CharacterState)
    }

    /// The character state buffer of page `page` (see [`Animator::page_outputs`]).
    #[must_use]
    pub fn page_output_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages().get(page).map(|p| p.buffer(Resource::CharacterState))
    }

    /// Page `page`'s outputs as a binding: `array<GpuOutput>`, instance
    /// `page_range(page).start + k` at `k`, at an offset aligned to 256 bytes (WebGPU's default
    /// `min_storage_buffer_offset_alignment`) in the page's character state buffer.
    #[must_use]
    pub fn page_outputs(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        let buffer = self.pages().get(page)?.buffer(Resource::CharacterState);
        let capacity = self.controller().page_capacity(page);
        let offset = outputs_offset(capacity);
        let bytes = u64::from(capacity) * size_of::<crate::layout::GpuOutput>() as u64;
        Some(wgpu::BufferBinding {
            buffer,
            offset,
            size: std::num::NonZeroU64::new(bytes.max(size_of::<crate::layout::GpuOutput>() as u64)),
        })
    }

    /// Blend lists of the first page (`BlendList` per instance), written by `clock`, read by
    /// `sample` and the fused stage: a section of the page's character state
    /// ([`crate::shaders::Resource::BlendLists`]).
    #[must_use]
    pub fn blend_list_buffer(&self) -> wgpu::BufferBinding<'_> {
        self.pages()[0].binding(Resource::BlendLists)
    }

    /// Joint capacity of the first page: its local pose buffer holds this many current poses
    /// (then, with layers, as many mesh-space deltas), its pose history as many snapshots (then,
    /// with inertialization, as many velocities).
    #[must_use]
    pub fn max_joints(&self) -> u32 {
        self.controller().page_max_joints(0)
    }

    /// Local poses of the first page (`LocalPose` per joint), written by `sample`; with layers,
    /// mesh-space deltas from `max_joints()` on. The fused path leaves them alone, but with a
    /// thread per character ([`crate::gpu::CharacterThreads::One`]), which works in this buffer
    /// and leaves each joint's model matrix there (its rows in a `LocalPose`'s three slots).
    #[must_use]
    pub fn local_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::LocalPoses)
    }

    /// Model-space matrices of the first page (`Affine` per joint), written by `local_to_model`
    /// (not by the fused path).
    #[must_use]
    pub fn model_buffer(&self) -> &wgpu::Buffer {
        self.pages()[0].buffer(Resource::ModelPoses)
    }

    /// Page `page`'s buffer of `resource`, any per-page resource of the binding table
    /// ([`Resource::scope`] is [`Scope::Page`](crate::shaders::Scope::Page)); `None` for a page
    /// that does not exist or a resource that is not per page. Laid out as
    /// [`Resource::page_bytes`] says; for a section of another resource's buffer
    /// ([`Resource::home`]), that buffer, the section where [`Resource::place`] says.
    #[must_use]
    pub fn page_buffer(&self, page: usize, resource: Resource) -> Option<&wgpu::Buffer> {
        if resource.scope() != crate::shaders::Scope::Page {
            return None;
        }
        self.pages().get(page).map(|p| p.buffer(resource))
    }
}
