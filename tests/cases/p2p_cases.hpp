#pragma once

// Checks of point-to-point messaging and splitting, written once and run both on threads-as-ranks
// (inproc) and under mpirun (mpi). Each is collective over `comm` and uses GoogleTest assertions.

#include "meshcomm/communicator.hpp"

namespace meshcomm::testing {

/// Each rank sends rank-stamped data to its right neighbour and checks what its left sent.
void check_ring_exchange(Communicator& comm);
/// Messages with tags 1, 2, 3 are received in the order 3, 2, 1, each into the right buffer.
void check_out_of_order_tags(Communicator& comm);
/// Messages with one tag between one pair arrive in the order they were sent.
void check_same_tag_order(Communicator& comm);
/// Large messages (on ucx they go by descriptor) one way, in bursts of one tag whose receives
/// come late, and as a ping-pong, between ranks 0 and 1: each arrives whole and in order.
void check_one_way_large_messages(Communicator& comm);
/// Large exchanges between ranks 0 and 1 in which rank 1 runs ahead: its message (on ucx, the
/// descriptor of it) has come before rank 0 posts the receive, beside which rank 0 then posts a
/// send of its own. Both messages of every round land whole.
void check_exchange_behind_the_peer(Communicator& comm);
/// Mid-sized messages (32-128 KiB; on ucx they go by descriptor where their sender has a large
/// receive posted, eagerly otherwise) in ring exchanges, and one way between ranks 0 and 1 on one
/// tag, sent one way then the other and received late: each lands whole, in the order sent.
void check_mid_sized_messages(Communicator& comm);
/// A rank blocked in the wait of a small collective still progresses a large receive it posted
/// before: the sender waits for that receive to complete before it joins the collective, so
/// both end only if every wait drives the backend's other operations (MPI's progress rule).
void check_waits_progress_other_operations(Communicator& comm);
/// Zero-byte messages, with and without a pointer, complete on both sides.
void check_zero_size_messages(Communicator& comm);
/// Split by parity with reversed keys: sizes, order, root ranks, and messaging inside.
void check_split(Communicator& comm);
/// A receive from a peer that never sends fails with a timeout naming the peer, within the
/// timeout, and leaves the communicator usable.
void check_receive_timeout(Communicator& comm);
/// Bad peers, tags, buffers and colors are rejected, naming the argument; the communicator stays
/// usable.
void check_argument_errors(Communicator& comm);
/// A receive smaller than the message fails with size_mismatch on the receiving rank.
void check_size_mismatch(Communicator& comm);

}  // namespace meshcomm::testing
