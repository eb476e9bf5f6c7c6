//! A body read whole ([`whole`]): the client's request on a path that reads it first
//! (`intake.rs`), and an upstream answer held before it is handed on (`answer.rs`: a routed JSON
//! answer, an error answer).

use bytes::{Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt;

/// Every data frame of `body` as one `Bytes`, trailers left out. A body of one data frame (most:
/// a JSON request or answer is written at once) is that frame as it came; only a second frame
/// starts a buffer. (`BodyExt::collect`, which keeps a list of frames and builds the bytes from
/// it, cost a routed JSON answer 1.3k instructions, this 0.8k: issue 40.)
pub(crate) async fn whole<B>(mut body: B) -> Result<Bytes, B::Error>
where
    B: Body<Data = Bytes> + Unpin,
{
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else { continue };
        if data.is_empty() {
            continue;
        }
        match (&mut joined, first.take()) {
            (Some(all), _) => all.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(head)) => {
                let mut all = BytesMut::with_capacity(head.len() + data.len());
                all.extend_from_slice(&head);
                all.extend_from_slice(&data);
                joined = Some(all);
            }
        }
    }
    Ok(match joined {
        Some(all) => all.freeze(),
        None => first.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;
    use http_body::Frame;
    use http_body_util::StreamBody;

    use super::*;

    type Framed = StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;

    /// A body of these frames (data, and a trailers frame when `trailers`).
    fn framed(chunks: &[&'static str], trailers: bool) -> Framed {
        let mut frames: Vec<Result<Frame<Bytes>, std::io::Error>> =
            chunks.iter().map(|c| Ok(Frame::data(Bytes::from_static(c.as_bytes())))).collect();
        if trailers {
            frames.push(Ok(Frame::trailers(HeaderMap::new())));
        }
        StreamBody::new(futures_util::stream::iter(frames))
    }

    #[tokio::test]
    async fn every_data_frame_is_joined_in_order_and_trailers_are_left_out() {
        for (chunks, trailers, want) in [
            (&[][..], false, ""),
            (&["{\"a\":1}"][..], false, "{\"a\":1}"),
            (&["{\"a\"", "", ":1", "}"][..], true, "{\"a\":1}"),
            (&["", "x"][..], false, "x"),
        ] {
            let got = whole(framed(chunks, trailers)).await.expect("a body without errors is read whole");
            assert_eq!(&got[..], want.as_bytes(), "frames {chunks:?} (trailers: {trailers}) make one body in order");
        }
    }

    #[tokio::test]
    async fn a_broken_body_is_an_error_not_a_short_body() {
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> =
            vec![Ok(Frame::data(Bytes::from_static(b"{\"a\""))), Err(std::io::Error::other("reset"))];
        let got = whole(StreamBody::new(futures_util::stream::iter(frames))).await;
        assert!(got.is_err(), "a body that breaks halfway must not pass as the part that came");
    }
}
