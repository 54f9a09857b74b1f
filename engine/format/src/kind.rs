//! Page types and the flags that name them (bbolt compares a page's flags with `==`, so a page
//! carries exactly one type flag).

pub const FLAG_BRANCH: u16 = 0x01;
pub const FLAG_LEAF: u16 = 0x02;
pub const FLAG_META: u16 = 0x04;
pub const FLAG_FREELIST: u16 = 0x10;

/// Leaf element flag: the value is a bucket header (a sub-bucket), not user data.
pub const LEAF_FLAG_BUCKET: u32 = 0x01;

/// Size of a branch or leaf element header.
pub const ELEMENT_SIZE: usize = 16;

/// The type of a page, decoded from its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKind {
    Branch,
    Leaf,
    Meta,
    Freelist,
}

impl PageKind {
    pub fn flags(self) -> u16 {
        match self {
            PageKind::Branch => FLAG_BRANCH,
            PageKind::Leaf => FLAG_LEAF,
            PageKind::Meta => FLAG_META,
            PageKind::Freelist => FLAG_FREELIST,
        }
    }

    /// bbolt compares flags with `==`: a page carries exactly one type flag.
    pub fn from_flags(flags: u16) -> Option<PageKind> {
        match flags {
            FLAG_BRANCH => Some(PageKind::Branch),
            FLAG_LEAF => Some(PageKind::Leaf),
            FLAG_META => Some(PageKind::Meta),
            FLAG_FREELIST => Some(PageKind::Freelist),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PageKind::Branch => "branch",
            PageKind::Leaf => "leaf",
            PageKind::Meta => "meta",
            PageKind::Freelist => "freelist",
        }
    }
}
