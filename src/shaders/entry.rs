//! What the binding table says of a resource beside its name ([`Resource::entry`]): its
//! [`Entry`], where its buffer lives ([`Scope`]), what a lost device leaves of it
//! ([`Survival`]), the options a page's buffers are sized by ([`PageOptions`]) and its
//! per-instance [`Sections`].

use super::Resource;

/// A resource's entry in the binding table ([`Resource::entry`]): what it is, where it lives,
/// what it holds after its own data, and what a lost device, a read-back and a page's buffer
/// make of it, and which stages bind it and how. Its sizes follow from its instances and joints
/// ([`Resource::data_bytes`], [`Resource::instance_sections`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The WGSL variable's name.
    pub name: &'static str,
    /// The WGSL variable's type; for a section, the type a binding of the section alone
    /// declares (as the skinning module binds the morph weights and the dual quaternions).
    pub wgsl_type: &'static str,
    /// The least bytes a binding of it holds ([`Resource::min_binding_size`]).
    pub min_binding_size: u64,
    /// A uniform buffer (else a storage buffer).
    pub uniform: bool,
    /// Where its buffer lives.
    pub scope: Scope,
    /// The stages that bind it and how ([`Stage::bindings`](super::Stage::bindings) is made from
    /// these); none for a section, which stages reach through its home.
    pub stages: &'static [(super::Stage, super::Access)],
    /// The sections its page buffer holds after its own data ([`Resource::sections`]).
    pub sections: &'static [Resource],
    /// Buffer usages beyond `STORAGE | COPY_SRC | COPY_DST` of a per-page buffer.
    pub extra_usage: wgpu::BufferUsages,
    /// Whether the ring may read it back every frame while watched.
    pub read_back: bool,
    /// What of it a new device gets when the old one is lost.
    pub survival: Survival,
}

/// A section of a per-page buffer: one value per instance (or per joint), end to end from
/// `offset` ([`Resource::instance_sections`], [`Resource::snapshot_section`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Section {
    /// Where the value of instance (or joint) 0 starts in the page's buffer, in bytes.
    pub offset: u64,
    /// Bytes per instance (or joint).
    pub stride: u64,
}

impl Section {
    /// A section from byte 0 with `stride` bytes per value.
    pub(super) const fn from_start(stride: usize) -> Self {
        Self {
            offset: 0,
            stride: stride as u64,
        }
    }

    /// Where the value of instance (or joint) `index` starts in the page's buffer, in bytes.
    #[must_use]
    pub const fn at(self, index: u64) -> u64 {
        self.offset + index * self.stride
    }

    /// Bytes of `count` values.
    #[must_use]
    pub const fn bytes(self, count: u64) -> u64 {
        count * self.stride
    }
}

/// The per-instance sections of a resource's page buffer, in buffer order
/// ([`Resource::instance_sections`]): at most [`Sections::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sections {
    list: [Section; Sections::MAX],
    len: usize,
}

impl Sections {
    /// The most sections a resource has (the visible lists' evaluated, drawn and marks).
    pub const MAX: usize = 3;
    /// No section: a resource that is not per instance.
    pub const NONE: Sections = Sections {
        list: [Section { offset: 0, stride: 0 }; Sections::MAX],
        len: 0,
    };

    pub(super) const fn one(a: Section) -> Self {
        Self {
            list: [a, Section { offset: 0, stride: 0 }, Section { offset: 0, stride: 0 }],
            len: 1,
        }
    }

    pub(super) const fn two(a: Section, b: Section) -> Self {
        Self {
            list: [a, b, Section { offset: 0, stride: 0 }],
            len: 2,
        }
    }

    pub(super) const fn three(a: Section, b: Section, c: Section) -> Self {
        Self {
            list: [a, b, c],
            len: 3,
        }
    }

    /// The sections, in buffer order.
    #[must_use]
    pub fn as_slice(&self) -> &[Section] {
        &self.list[..self.len]
    }

    /// How many sections there are.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none (the resource is not per instance).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the last section ends with `instances` instances, in bytes (0 with no section).
    #[must_use]
    pub const fn end(&self, instances: u32) -> u64 {
        if self.len == 0 {
            return 0;
        }
        self.list[self.len - 1].at(instances as u64)
    }
}

impl PageOptions {
    /// No option: what a page of instances and joints alone holds.
    pub const NONE: PageOptions = PageOptions {
        sockets: false,
        dual_quaternion: false,
        morph_weights: 0,
        inertialization: false,
        layers: false,
        culling: false,
        lod_interpolation: false,
    };
}

impl IntoIterator for Sections {
    type Item = Section;
    type IntoIter = std::iter::Take<std::array::IntoIter<Section, { Sections::MAX }>>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.into_iter().take(self.len)
    }
}

/// What a page's buffers hold beyond its instances and joints: what [`Resource::page_bytes`]
/// sizes by besides them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageOptions {
    /// The library has sockets: the palettes hold [`crate::layout::MAX_SOCKETS`] socket matrices
    /// per instance after the joints.
    pub sockets: bool,
    /// The animator keeps dual quaternions ([`crate::gpu::AnimatorDesc::dual_quaternion`]): one
    /// `DualQuat` per joint.
    pub dual_quaternion: bool,
    /// Morph weights per instance ([`crate::gpu::AnimatorDesc::morph_weights`]).
    pub morph_weights: u32,
    /// Instances may inertialize transitions ([`crate::gpu::AnimatorDesc::inertialization`]): a
    /// second `LocalPose` per joint in the pose history, the velocity.
    pub inertialization: bool,
    /// Instances may play layers ([`crate::gpu::AnimatorDesc::layers`]): a second `LocalPose` per
    /// joint in the local poses, the mesh-space additive delta.
    pub layers: bool,
    /// The animator culls ([`crate::gpu::AnimatorDesc::culling`]): the frame runs the cull
    /// stage and the later stages over its list ([`Resource::Visible`], which every page has).
    pub culling: bool,
    /// Update-rate LOD interpolates ([`crate::gpu::AnimatorDesc::lod_interpolation`]): the
    /// palettes hold two key palettes per joint after the socket matrices.
    pub lod_interpolation: bool,
}

/// Where a [`Resource`]'s buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The page's slot of the animator's frame uniform buffer.
    Frame,
    /// The library's ([`crate::gpu::GpuLibrary`]), shared by every animator that plays it.
    Library,
    /// The animator's, one for all its pages.
    Animator,
    /// One buffer per page, of [`Resource::page_bytes`].
    Page,
}

/// What of a [`Resource`] a rebuilt animator gets on a new device ([`Resource::on_device_loss`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Survival {
    /// Written again from what the CPU holds (the library, the instances, the layer
    /// definitions, the frame).
    FromCpu,
    /// Copied back at every checkpoint, written to the new device, and the frames since
    /// replayed.
    Checkpointed,
    /// Only its snapshot region (the poses, or the morph weights, interrupted cross-fades start
    /// from) is checkpointed ([`Resource::snapshot_section`],
    /// [`Resource::instance_snapshot_section`]).
    SnapshotsCheckpointed,
    /// With [`PageOptions::inertialization`], its first section, the poses the frame showed
    /// ([`Resource::LocalPoses`], a `LocalPose` per joint from byte 0), is checkpointed for every
    /// instance in use: the next frame may take an inertialized transition's velocity from them
    /// ([`crate::layout::VELOCITY_FROM_LAST_POSE`]). The rest is recomputed.
    PosesCheckpointed,
    /// Written anew every frame from the rest: nothing to keep.
    Recomputed,
}
