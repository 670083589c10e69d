"""A small SIP user agent server over UDP (RFC 3261) that answers calls and hands them on.

It answers INVITE with 100/180/200 and an SDP answer, retransmits final INVITE responses with
T1 doubling until the ACK arrives (Timers G/H), keeps non-INVITE responses for retransmitted
requests (Timer J), and handles ACK, BYE, CANCEL (200 + 487), OPTIONS, INFO (DTMF),
re-INVITE and late offers (no SDP in the INVITE: we offer, the ACK answers). It has no game
logic: an application implements :class:`CallHandler`.

In-dialog requests we send (BYE) go to the first Record-Route entry or the Contact when those
name an IP address, else back to where the INVITE came from: behind Kamailio that is the proxy.

A datagram that does not parse, or lacks the headers a response needs, is logged and dropped;
every call's state lives in its own :class:`Call`, so one bad packet cannot affect others.

The port is open to anyone and UDP source addresses can be forged (docs/security.md, "SIP and
RTP"), so: a request that parses but cannot be served is answered 400 (500 for our own bugs)
and every resource made for it is released; new INVITEs are checked against per-source rates
and call caps before anything is allocated (:mod:`vollmond.phone.sip.guard`), and refusals are
sent once and statelessly; media flows only after the ACK (which a forged source cannot send,
as it never sees our To tag), and only to the host the signalling came from — or to the SDP's
host when a trusted proxy sent the INVITE.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final, cast

from vollmond.phone.callmedia import CallMedia, LocalMedia, MediaBackend
from vollmond.phone.dtmf import DtmfParseError, parse_info_dtmf
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import Int16Array, MediaParams
from vollmond.phone.mediaproc.client import MediaProcesses
from vollmond.phone.mediaproc.worker import STATS_PERIOD_S
from vollmond.phone.sdp import (
    OFFER_DTMF_PT,
    Negotiated,
    SdpError,
    SessionDescription,
    build_answer,
    build_offer,
    negotiate,
    parse_sdp,
)
from vollmond.phone.sip.call import Call, CallHandler, CallState, EndReason
from vollmond.phone.sip.guard import (
    Admission,
    DropCounts,
    DropReason,
    SipStats,
    asserted_number,
)
from vollmond.phone.sip.message import (
    Headers,
    SipParseError,
    SipRequest,
    SipResponse,
    header_params,
    header_uri,
    parse_cseq,
    parse_message,
    response_for,
)
from vollmond.settings.sip import SipSettings

__all__ = ["Call", "CallHandler", "CallState", "EndReason", "SipUas", "UasConfig"]

log = logging.getLogger(__name__)

MAGIC_COOKIE: Final = "z9hG4bK"
ALLOWED_METHODS: Final = ("INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "INFO")
#: Methods a SIP peer may reasonably send that this server knows but does not do (→ 405).
KNOWN_UNSUPPORTED: Final = frozenset(
    {"REGISTER", "SUBSCRIBE", "NOTIFY", "PUBLISH", "MESSAGE", "REFER", "UPDATE", "PRACK"}
)
_REQUIRED: Final = ("Via", "From", "To", "Call-ID", "CSeq")
_ALLOW: Final = ("Allow", ", ".join(ALLOWED_METHODS))
#: Media state of a late-offer call until the ACK brings the answer: nothing is sent.
_LATE_OFFER: Final = Negotiated(
    media_index=0,
    remote_address="0.0.0.0",
    remote_port=9,
    codec=ULAW,
    audio_pt=0,
    dtmf_pt=OFFER_DTMF_PT,
    direction="inactive",
)


@dataclass(frozen=True, slots=True)
class UasConfig:
    """Server settings; timers follow RFC 3261 (T1 500 ms, T2 4 s) unless a test shrinks them."""

    host: str = "127.0.0.1"
    port: int = 5060
    advertised_host: str | None = None
    ring_time: float = 0.0
    t1: float = 0.5
    t2: float = 4.0
    rtp_timeout: float = 30.0
    session_timeout: float = 4 * 3600.0
    user_agent: str = "vollmond"
    #: Trust and limits decided by the operator (the ``[sip]`` table of the settings file).
    settings: SipSettings = field(default_factory=SipSettings)
    #: RTP in this many media processes (``[phone] media_processes``); 0: on this event loop.
    media_processes: int = 0
    #: Their real-time priority (``[phone] media_priority``, SCHED_RR); 0: ordinary processes.
    media_priority: int = 0

    def __post_init__(self) -> None:
        if self.media_processes and self.rtp_timeout < 4 * STATS_PERIOD_S:
            # A media process tells the time of a call's last packet twice a second only.
            raise ValueError(f"with media processes rtp_timeout must be >= {4 * STATS_PERIOD_S}")

    @property
    def contact_host(self) -> str:
        """The address put into Contact and SDP."""
        return self.advertised_host or self.host


@dataclass(eq=False)
class _ServerTransaction:
    """What is needed to answer a retransmitted request and to stop retransmitting."""

    request: SipRequest
    addr: tuple[str, int]
    last_response: bytes | None = None
    final_sent: bool = False
    retransmit: asyncio.Task[None] | None = None
    call: Call | None = None
    ring: asyncio.TimerHandle | None = None


@dataclass(frozen=True, slots=True)
class _Invite:
    """What a new call needs from its INVITE, parsed before anything is allocated for it."""

    remote_target: str
    route_set: tuple[str, ...]
    remote_tag: str
    cseq: int
    offer: SessionDescription | None
    #: The INVITE came from a trusted proxy (``SipSettings.trusted_proxies``).
    trusted: bool
    asserted_identity: str | None


def _warning(text: str) -> tuple[str, str]:
    """A Warning header (RFC 3261 §20.43) with a sanitised, short explanation."""
    clean = "".join(ch if ch.isprintable() and ch not in '"\\' else "?" for ch in text)
    return ("Warning", f'399 - "{clean[:100]}"')


def _transaction_key(request: SipRequest) -> str:
    """RFC 3261 §17.2.3: the top Via branch (plus method, as CANCEL shares INVITE's branch)."""
    via = request.require("Via")
    branch = header_params(via).get("branch", "")
    method = "INVITE" if request.method == "ACK" else request.method
    if branch.startswith(MAGIC_COOKIE):
        return f"{branch}|{via.split(';', 1)[0]}|{method}"
    number, _ = parse_cseq(request.require("CSeq"))
    return f"{request.require('Call-ID')}|{request.require('From')}|{number}|{method}"


def _tag(value: str) -> str:
    return header_params(value).get("tag", "")


def _new_tag() -> str:
    return secrets.token_hex(6)


def _uri_address(uri: str) -> tuple[str, int] | None:
    """host:port of a sip: URI when the host is an IP literal (no DNS on the media path)."""
    rest = uri.split(":", 1)[1] if ":" in uri else uri
    hostport = rest.split("@", 1)[-1].split(";", 1)[0].split("?", 1)[0]
    if hostport.startswith("["):
        host, _, port_text = hostport[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = hostport.partition(":")
    try:
        ipaddress.ip_address(host)
        port = int(port_text) if port_text else 5060
    except ValueError:
        return None
    return host, port


class SipUas(asyncio.DatagramProtocol):
    """The UDP SIP server. Create with :meth:`start`, stop with :meth:`close`."""

    def __init__(self, config: UasConfig, handler: CallHandler) -> None:
        self.config = config
        self.handler = handler
        self._transport: asyncio.DatagramTransport | None = None
        self._transactions: dict[str, _ServerTransaction] = {}
        self._calls: dict[tuple[str, str], Call] = {}
        self._client: dict[str, asyncio.Future[SipResponse]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Where the calls' RTP is handled (docs/voice.md, "The media process").
        self.media: MediaBackend = (
            MediaProcesses(config.media_processes, priority=config.media_priority)
            if config.media_processes
            else LocalMedia()
        )
        self.media.on_lost = self._media_lost
        self._admission = Admission(config.settings)
        #: INVITE transactions whose call is being set up (RTP port being opened).
        self._setups: set[_ServerTransaction] = set()
        self.drops = DropCounts()
        #: Datagrams that reached the SIP port (taken or not).
        self.received = 0

    @classmethod
    async def start(cls, config: UasConfig, handler: CallHandler) -> SipUas:
        """Bind the SIP socket and start answering."""
        loop = asyncio.get_running_loop()
        _, uas = await loop.create_datagram_endpoint(
            lambda: cls(config, handler), local_addr=(config.host, config.port)
        )
        try:
            await uas.media.start()
        except BaseException:
            uas._transport_close()
            raise
        return uas

    def _transport_close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    @property
    def port(self) -> int:
        """The bound SIP port (useful when configured as 0)."""
        if self._transport is None:
            raise RuntimeError("server is not started")
        port: int = self._transport.get_extra_info("sockname")[1]
        return port

    @property
    def calls(self) -> list[Call]:
        """Calls that are not yet ended."""
        return list(self._calls.values())

    @property
    def dropped(self) -> int:
        """Datagrams dropped as malformed (not SIP, or unanswerable requests)."""
        return self.drops[DropReason.MALFORMED]

    @property
    def transactions(self) -> int:
        """Server transactions remembered (for retransmissions); bounded by the rate limits."""
        return len(self._transactions)

    @property
    def tasks(self) -> int:
        """Background tasks of the server (set-ups, BYEs); zero when idle."""
        return len(self._tasks)

    def sip_stats(self) -> SipStats:
        """Active calls, dropped datagrams by reason and the media clocks, for Prometheus."""
        return SipStats(len(self._calls), self.drops.snapshot(), self.media.clock_stats())

    def _count_drop(self, reason: DropReason) -> None:
        self.drops.add(reason)

    def _media_drop(self, why: str) -> None:
        self.drops.add(DropReason.FOREIGN_RTP if why == "foreign" else DropReason.MALFORMED_RTP)

    async def close(self, bye_timeout: float = 2.0) -> None:
        """Hang up every call (BYE, waiting at most ``bye_timeout`` for answers) and close."""
        byes = [
            self._spawn(self._end_call(call, EndReason.SHUTDOWN, send_bye=True))
            for call in list(self._calls.values())
        ]
        if byes:
            await asyncio.wait(byes, timeout=bye_timeout)
        for txn in self._transactions.values():
            self._stop_retransmit(txn)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        # Let cancelled set-ups run their clean-up (closing RTP ports) before we return.
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.media.close()
        self._transport_close()

    @staticmethod
    def _notify(callback: Callable[..., None], *args: object) -> None:
        """Call the application; its bugs are logged, never allowed to corrupt SIP state."""
        try:
            callback(*args)
        except Exception:
            log.exception("call handler %s failed", getattr(callback, "__name__", callback))

    # --- transport -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Datagram endpoints always get a datagram transport (not a subclass in CPython 3.11).
        self._transport = cast(asyncio.DatagramTransport, transport)

    def error_received(self, exc: Exception) -> None:
        log.debug("SIP socket error: %s", exc)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        """Every datagram ends here: taken, answered with an error, or dropped and counted.
        Nothing a sender puts in a datagram may raise out of this method."""
        self.received += 1
        try:
            message = parse_message(data)
            if isinstance(message, SipResponse):
                self._on_response(message)
                return
            for name in _REQUIRED:
                message.require(name)
            parse_cseq(message.require("CSeq"))
        except (SipParseError, SdpError) as exc:
            self._count_drop(DropReason.MALFORMED)
            log.info("dropping bad SIP datagram from %s:%s: %s", addr[0], addr[1], exc)
            return
        except Exception:
            self._count_drop(DropReason.INTERNAL_ERROR)
            log.exception("SIP datagram from %s:%s not handled", addr[0], addr[1])
            return
        loop = asyncio.get_running_loop()
        if not self._admission.request_allowed(addr[0], loop.time()):
            self._count_drop(DropReason.RATE_LIMITED)
            return
        try:
            self._on_request(message, addr)
        except (SipParseError, SdpError) as exc:
            self._count_drop(DropReason.MALFORMED)
            log.info("bad %s from %s:%s: %s", message.method, addr[0], addr[1], exc)
            self._fail_request(message, addr, 400, str(exc))
        except Exception:
            self._count_drop(DropReason.INTERNAL_ERROR)
            log.exception("%s from %s:%s failed", message.method, addr[0], addr[1])
            self._fail_request(message, addr, 500, "internal error")

    def _fail_request(
        self, request: SipRequest, addr: tuple[str, int], status: int, why: str
    ) -> None:
        """Answer a request that could not be handled and forget its transaction (an ACK gets
        no answer). Must not raise: it runs on the error path."""
        try:
            self._transactions.pop(_transaction_key(request), None)
            if request.method != "ACK":
                self._reply_stateless(request, addr, status, extra=(_warning(why),))
        except Exception:
            log.exception("could not answer %s with %s", request.method, status)

    def _reply_stateless(
        self, request: SipRequest, addr: tuple[str, int], status: int, *, extra: Headers = ()
    ) -> None:
        """Answer once, keeping nothing (RFC 3261 §8.2.7): for refusals and bad requests, so a
        forged source gets one answer per request at most and leaves no state behind."""
        response = response_for(
            request, status, to_tag=_new_tag(), extra=(("Server", self.config.user_agent), *extra)
        )
        self._send(response.serialise(), addr)

    def _send(self, data: bytes, addr: tuple[str, int]) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.sendto(data, addr)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """Forget a finished task and log its failure (never "exception was never retrieved")."""
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._count_drop(DropReason.INTERNAL_ERROR)
            log.error("SIP task failed", exc_info=exc)

    def _respond(
        self,
        txn: _ServerTransaction,
        status: int,
        *,
        to_tag: str | None = None,
        extra: Headers = (),
        body: bytes = b"",
    ) -> bytes:
        response = response_for(
            txn.request,
            status,
            to_tag=to_tag,
            extra=(("Server", self.config.user_agent), *extra),
            body=body,
        )
        data = response.serialise()
        txn.last_response = data
        txn.final_sent = status >= 200
        self._send(data, txn.addr)
        return data

    def _contact(self) -> tuple[str, str]:
        return ("Contact", f"<sip:vollmond@{self.config.contact_host}:{self.port}>")

    # --- request dispatch ------------------------------------------------------------------

    def _on_request(self, request: SipRequest, addr: tuple[str, int]) -> None:
        key = _transaction_key(request)
        existing = self._transactions.get(key)
        if request.method == "ACK":
            self._on_ack(request, existing)
            return
        if existing is not None:
            # A retransmission: repeat whatever we last said.
            if existing.last_response is not None:
                self._send(existing.last_response, addr)
            return
        if request.method == "INVITE" and not _tag(request.require("To")):
            self._on_new_invite(request, addr, key)
            return
        txn = _ServerTransaction(request, addr)
        self._transactions[key] = txn
        if request.method != "INVITE":
            # Timer J: keep the answer for retransmissions, then forget the transaction.
            asyncio.get_running_loop().call_later(
                64 * self.config.t1, self._transactions.pop, key, None
            )
        method = request.method
        if method == "INVITE":
            self._on_reinvite(txn)
        elif method == "CANCEL":
            self._on_cancel(txn)
        elif method == "BYE":
            self._on_bye(txn)
        elif method == "OPTIONS":
            self._respond(
                txn,
                200,
                to_tag=_new_tag(),
                extra=(_ALLOW, ("Accept", "application/sdp"), self._contact()),
            )
        elif method == "INFO":
            self._on_info(txn)
        elif method in KNOWN_UNSUPPORTED:
            self._respond(txn, 405, to_tag=_new_tag(), extra=(_ALLOW,))
        else:
            self._respond(txn, 501, to_tag=_new_tag(), extra=(_ALLOW,))

    def _dialog_of(self, request: SipRequest) -> Call | None:
        call_id = request.require("Call-ID")
        call = self._calls.get((call_id, _tag(request.require("To"))))
        if call is None or call.remote_tag != _tag(request.require("From")):
            return None
        return call

    # --- INVITE ----------------------------------------------------------------------------

    def _on_new_invite(self, request: SipRequest, addr: tuple[str, int], key: str) -> None:
        """A call attempt: everything is checked before anything is allocated, so a refusal or
        a malformed INVITE (raised as SipParseError/SdpError → 400) costs one stateless answer."""
        invite = self._read_invite(request, addr)
        refusal = self._admission.refuse_call(
            addr[0],
            asyncio.get_running_loop().time(),
            total=len(self._calls) + len(self._setups),
            from_source=self._calls_from(addr[0]),
        )
        if refusal is not None:
            self._count_drop(refusal.reason)
            log.info("refusing call from %s: %s", addr[0], refusal.reason.value)
            extra: Headers = ()
            if refusal.retry_after is not None:
                extra = (("Retry-After", str(refusal.retry_after)),)
            self._reply_stateless(request, addr, refusal.status, extra=extra)
            return
        txn = _ServerTransaction(request, addr)
        self._transactions[key] = txn
        self._respond(txn, 100)
        if invite.offer is None and request.body:
            self._respond_final(txn, 488, _new_tag(), extra=(_warning("not SDP"),))
            return
        try:
            chosen = negotiate(invite.offer) if invite.offer is not None else _LATE_OFFER
        except SdpError as exc:
            log.info("rejecting call %s: %s", request.get("Call-ID"), exc)
            self._respond_final(txn, 488, _new_tag(), extra=(("Warning", f'304 - "{exc}"'),))
            return
        self._setups.add(txn)
        self._spawn(self._setup_call(txn, invite, chosen))

    def _read_invite(self, request: SipRequest, addr: tuple[str, int]) -> _Invite:
        """What a call needs from its INVITE, all parsed now (SipParseError/SdpError if not)."""
        contact = request.get("Contact")
        target = header_uri(contact) if contact else request.uri
        route_set = tuple(request.get_all("Record-Route"))
        for route in route_set:
            header_uri(route)
        from_tag = _tag(request.require("From"))
        if not from_tag:
            raise SipParseError("From without a tag")
        trusted = addr[0] in self._admission.trusted
        asserted = request.get("P-Asserted-Identity") if trusted else None
        return _Invite(
            remote_target=target,
            route_set=route_set,
            remote_tag=from_tag,
            cseq=parse_cseq(request.require("CSeq"))[0],
            offer=self._offer_of(request),
            trusted=trusted,
            asserted_identity=asserted_number(asserted) if asserted else None,
        )

    def _calls_from(self, host: str) -> int:
        """Calls held (or being set up) for the source ``host``."""
        held = sum(1 for call in self._calls.values() if call.peer[0] == host)
        return held + sum(1 for txn in self._setups if txn.addr[0] == host)

    @staticmethod
    def _offer_of(request: SipRequest) -> SessionDescription | None:
        ctype = (request.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if ctype != "application/sdp" or not request.body:
            return None
        return parse_sdp(request.body)

    async def _setup_call(
        self, txn: _ServerTransaction, invite: _Invite, chosen: Negotiated
    ) -> None:
        """Open the call's RTP port and ring. Whatever goes wrong (or a CANCEL or shutdown
        meanwhile), the INVITE gets a final answer and the port is closed."""
        request = txn.request
        local_tag = _new_tag()
        call_holder: list[Call] = []
        media: CallMedia | None = None

        def on_audio(samples: Int16Array) -> None:
            if call_holder and call_holder[0].state is CallState.CONFIRMED:
                self._notify(self.handler.on_audio, call_holder[0], samples)

        def on_digit(digit: str) -> None:
            if call_holder and call_holder[0].state is CallState.CONFIRMED:
                self._notify(self.handler.on_dtmf, call_holder[0], digit)

        try:
            params = self._media_params(chosen, txn.addr[0], trusted=invite.trusted)
            media = await self.media.open(
                self.config.host, params, on_audio, on_digit, self._media_drop
            )
            if txn.final_sent:  # CANCELled while the port was being opened
                return
            call = Call(
                call_id=request.require("Call-ID"),
                local_tag=local_tag,
                remote_tag=invite.remote_tag,
                from_header=request.require("From"),
                to_header=request.require("To"),
                remote_target=invite.remote_target,
                route_set=invite.route_set,
                peer=txn.addr,
                negotiated=chosen,
                media=media,
                invite_cseq=invite.cseq,
                awaiting_answer=invite.offer is None,
                trusted_source=invite.trusted,
                asserted_identity=invite.asserted_identity,
                _hangup=self._hangup,
            )
            answer = self._answer(call, invite.offer)
            call_holder.append(call)
            txn.call = call
            self._calls[(call.call_id, local_tag)] = call
            media = None  # the call owns the port now; _end_call closes it
            self._respond(txn, 180, to_tag=local_tag, extra=(self._contact(),))
            loop = asyncio.get_running_loop()
            txn.ring = loop.call_later(self.config.ring_time, self._answer_call, txn, answer)
        except OSError as exc:
            log.error("no RTP port for call %s: %s", request.get("Call-ID"), exc)
            if not txn.final_sent:
                self._respond_final(txn, 503, local_tag)
        except Exception:
            self._count_drop(DropReason.INTERNAL_ERROR)
            log.exception("setting up call %s failed", request.get("Call-ID"))
            if call_holder:
                await self._end_call(call_holder[0], EndReason.LOCAL_HANGUP, send_bye=False)
            if not txn.final_sent:
                self._respond_final(txn, 500, local_tag)
        finally:
            self._setups.discard(txn)
            if media is not None:
                media.close()

    def _media_params(self, chosen: Negotiated, source: str, *, trusted: bool) -> MediaParams:
        """Media goes to the SDP's port, but on the host the signalling came from: a caller
        cannot aim our RTP at a third party. Only a trusted proxy (rtpengine) may name another
        host. The endpoint takes packets from that host only."""
        host = chosen.remote_address if trusted else source
        return MediaParams(
            remote=(host, chosen.remote_port),
            codec=chosen.codec,
            audio_pt=chosen.audio_pt,
            dtmf_pt=chosen.dtmf_pt,
            send=not chosen.on_hold,
        )

    def _call_media(self, call: Call) -> MediaParams:
        return self._media_params(call.negotiated, call.peer[0], trusted=call.trusted_source)

    def _answer(self, call: Call, offer: SessionDescription | None) -> bytes:
        """Our SDP for the 200: an answer to the caller's offer, or our own offer if none."""
        if offer is None:
            return build_offer(
                local_address=self.config.contact_host,
                local_port=call.media.local_port,
                session_id=int(call.local_tag, 16) % 10**9,
                version=call.sdp_version,
            )
        return build_answer(
            offer,
            call.negotiated,
            local_address=self.config.contact_host,
            local_port=call.media.local_port,
            session_id=int(call.local_tag, 16) % 10**9,
            version=call.sdp_version,
        )

    def _answer_call(self, txn: _ServerTransaction, answer: bytes) -> None:
        """Send the 200 (retransmitted until the ACK). No media yet: a forged INVITE's 200 goes
        to the forged source, so the ACK that starts media can only come from a real caller."""
        call = txn.call
        if call is None or txn.final_sent or call.state is CallState.ENDED:
            return
        call.state = CallState.ANSWERED
        self._respond_final(
            txn,
            200,
            call.local_tag,
            extra=(self._contact(), _ALLOW, ("Content-Type", "application/sdp")),
            body=answer,
        )

    def _respond_final(
        self,
        txn: _ServerTransaction,
        status: int,
        to_tag: str,
        *,
        extra: Headers = (),
        body: bytes = b"",
    ) -> None:
        """Send a final INVITE response and retransmit it (T1, doubling to T2) until ACK."""
        data = self._respond(txn, status, to_tag=to_tag, extra=extra, body=body)
        txn.retransmit = self._spawn(self._retransmit(txn, data))

    async def _retransmit(self, txn: _ServerTransaction, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 64 * self.config.t1
        interval = self.config.t1
        while loop.time() + interval < deadline:
            await asyncio.sleep(interval)
            self._send(data, txn.addr)
            interval = min(2 * interval, self.config.t2)
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        txn.retransmit = None
        self._forget(txn)
        call = txn.call
        if call is not None and call.state is CallState.ANSWERED:
            log.warning("no ACK for call %s, hanging up", call.call_id)
            await self._end_call(call, EndReason.ACK_TIMEOUT, send_bye=True)

    def _forget(self, txn: _ServerTransaction) -> None:
        for key, value in list(self._transactions.items()):
            if value is txn:
                del self._transactions[key]

    def _stop_retransmit(self, txn: _ServerTransaction) -> None:
        if txn.retransmit is not None:
            txn.retransmit.cancel()
            txn.retransmit = None
        if txn.ring is not None:
            txn.ring.cancel()

    def _on_ack(self, ack: SipRequest, txn: _ServerTransaction | None) -> None:
        if txn is not None and txn.final_sent and txn.call is None:
            # ACK for a non-2xx final response (same branch): the transaction is done.
            self._stop_retransmit(txn)
            asyncio.get_running_loop().call_later(4 * self.config.t1, self._forget, txn)
            return
        call = self._dialog_of(ack)
        if call is None:
            return
        number, _ = parse_cseq(ack.require("CSeq"))
        for pending in list(self._transactions.values()):
            if pending.call is call and pending.request.method == "INVITE":
                invite_number, _ = parse_cseq(pending.request.require("CSeq"))
                if invite_number == number:
                    self._stop_retransmit(pending)
                    # Keep the transaction a little for INVITE retransmissions in flight.
                    asyncio.get_running_loop().call_later(
                        64 * self.config.t1, self._forget, pending
                    )
        if call.awaiting_answer and not self._take_answer(call, ack):
            self._spawn(self._end_call(call, EndReason.LOCAL_HANGUP, send_bye=True))
            return
        if call.state is CallState.ANSWERED:
            call.state = CallState.CONFIRMED
            call.media.start()  # media only from the ACK on
            self._arm_call_timers(call)
            self._notify(self.handler.on_call_started, call)

    def _take_answer(self, call: Call, ack: SipRequest) -> bool:
        """Apply the SDP answer carried by an ACK; False if there is none we can use."""
        call.awaiting_answer = False
        try:
            answer = self._offer_of(ack)
            if answer is None:
                log.warning("ACK for call %s carries no SDP answer", call.call_id)
                return False
            call.negotiated = negotiate(answer)
        except SdpError as exc:
            log.warning("unusable SDP answer in ACK for call %s: %s", call.call_id, exc)
            return False
        call.media.update(self._call_media(call))
        return True

    def _on_reinvite(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            # Answered once and forgotten: an INVITE transaction is otherwise only forgotten
            # when its final answer's retransmissions end (found by tests/phone/test_sip_fuzz).
            self._forget(txn)
            self._reply_stateless(txn.request, txn.addr, 481)
            return
        contact = txn.request.get("Contact")
        target = header_uri(contact) if contact else call.remote_target
        txn.call = call
        offer = self._offer_of(txn.request)
        try:
            if offer is not None:
                call.negotiated = negotiate(offer)
                call.media.update(self._call_media(call))
        except SdpError as exc:
            self._respond_final(txn, 488, call.local_tag, extra=(("Warning", f'304 - "{exc}"'),))
            return
        call.sdp_version += 1
        call.awaiting_answer = offer is None
        call.remote_target = target
        body = self._answer(call, offer)
        self._respond_final(
            txn,
            200,
            call.local_tag,
            extra=(self._contact(), _ALLOW, ("Content-Type", "application/sdp")),
            body=body,
        )

    # --- CANCEL, BYE, INFO -----------------------------------------------------------------

    def _on_cancel(self, txn: _ServerTransaction) -> None:
        invite_key = _transaction_key(txn.request).rsplit("|", 1)[0] + "|INVITE"
        invite = self._transactions.get(invite_key)
        if invite is None:
            self._respond(txn, 481, to_tag=_new_tag())
            return
        self._respond(txn, 200, to_tag=invite.call.local_tag if invite.call else _new_tag())
        if invite.final_sent:
            return
        call = invite.call
        if invite.ring is not None:
            invite.ring.cancel()
        tag = call.local_tag if call is not None else _new_tag()
        self._respond_final(invite, 487, tag)
        invite.call = None  # the 487's ACK then matches the transaction, not a dialog
        if call is not None:
            call.state = CallState.ENDED
            call.media.close()
            self._calls.pop((call.call_id, call.local_tag), None)

    def _on_bye(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            self._respond(txn, 481)
            return
        self._respond(txn, 200)
        self._spawn(self._end_call(call, EndReason.REMOTE_BYE, send_bye=False))

    def _on_info(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            self._respond(txn, 481)
            return
        ctype = txn.request.get("Content-Type")
        if ctype is None or not txn.request.body:
            self._respond(txn, 200)  # an empty INFO is a keep-alive probe
            return
        try:
            digit = parse_info_dtmf(ctype, txn.request.body)
        except DtmfParseError as exc:
            log.info("INFO on %s without a usable digit: %s", call.call_id, exc)
            self._respond(txn, 415, extra=(("Accept", "application/dtmf-relay, application/dtmf"),))
            return
        self._respond(txn, 200)
        if call.state is CallState.CONFIRMED:
            self._notify(self.handler.on_dtmf, call, digit)

    # --- call lifetime ---------------------------------------------------------------------

    def _arm_call_timers(self, call: Call) -> None:
        loop = asyncio.get_running_loop()
        call._timers.append(
            loop.call_later(
                self.config.session_timeout, self._timeout, call, EndReason.SESSION_TIMEOUT
            )
        )
        call._timers.append(loop.create_task(self._watch_rtp(call)))

    def _timeout(self, call: Call, reason: EndReason) -> None:
        self._spawn(self._end_call(call, reason, send_bye=True))

    async def _watch_rtp(self, call: Call) -> None:
        loop = asyncio.get_running_loop()
        check = min(1.0, self.config.rtp_timeout / 4)
        while call.state is CallState.CONFIRMED:
            await asyncio.sleep(check)
            if call.negotiated.on_hold:
                call.media.last_received = loop.time()
            elif loop.time() - call.media.last_received > self.config.rtp_timeout:
                self._timeout(call, EndReason.RTP_TIMEOUT)
                return

    def _media_lost(self, media: CallMedia) -> None:
        """The call's media process ended: hang up (a new process takes the next calls)."""
        for call in list(self._calls.values()):
            if call.media is media:
                self._spawn(self._end_call(call, EndReason.MEDIA_FAILED, send_bye=True))

    def _hangup(self, call: Call) -> None:
        self._spawn(self._end_call(call, EndReason.LOCAL_HANGUP, send_bye=True))

    async def _end_call(self, call: Call, reason: EndReason, *, send_bye: bool) -> None:
        if call.state is CallState.ENDED:
            return
        started = call.state is CallState.CONFIRMED
        answered = call.state in (CallState.ANSWERED, CallState.CONFIRMED)
        call.state = CallState.ENDED
        self._calls.pop((call.call_id, call.local_tag), None)
        try:
            for timer in call._timers:
                timer.cancel()
            for txn in list(self._transactions.values()):
                if txn.call is not call:
                    continue
                self._stop_retransmit(txn)
                if txn.request.method == "INVITE" and not txn.final_sent:
                    # Ended while still ringing (early BYE, shutdown): finish the INVITE too.
                    self._respond_final(txn, 487, call.local_tag)
                    txn.call = None
        finally:
            call.media.close()
        if started:
            self._notify(self.handler.on_call_ended, call, reason)
        if send_bye and answered:
            with contextlib.suppress(TimeoutError):
                # A 200 never ACKed is most likely a forged INVITE's: after its ten or so
                # retransmissions the BYE is sent once, not ten more times (docs/decisions.md).
                await self._send_bye(call, once=not started)

    # --- requests we send ------------------------------------------------------------------

    async def _send_bye(self, call: Call, *, once: bool = False) -> SipResponse | None:
        """BYE as a non-INVITE client transaction: retransmit until a final response (or, with
        ``once``, send it a single time and wait for nothing)."""
        branch = MAGIC_COOKIE + secrets.token_hex(8)
        call.local_cseq += 1
        headers: list[tuple[str, str]] = [
            ("Via", f"SIP/2.0/UDP {self.config.contact_host}:{self.port};branch={branch};rport"),
            ("Max-Forwards", "70"),
        ]
        headers.extend(("Route", r) for r in call.route_set)
        headers += [
            ("From", f"{call.to_header};tag={call.local_tag}"),
            ("To", call.from_header),
            ("Call-ID", call.call_id),
            ("CSeq", f"{call.local_cseq} BYE"),
            ("User-Agent", self.config.user_agent),
        ]
        bye = SipRequest(tuple(headers), b"", "BYE", call.remote_target).serialise()
        target = self._bye_destination(call)
        if once:
            self._send(bye, target)
            return None
        loop = asyncio.get_running_loop()
        done: asyncio.Future[SipResponse] = loop.create_future()
        self._client[branch] = done
        try:
            return await asyncio.wait_for(
                self._resend_until(bye, target, done), 64 * self.config.t1
            )
        finally:
            self._client.pop(branch, None)

    async def _resend_until(
        self, data: bytes, target: tuple[str, int], done: asyncio.Future[SipResponse]
    ) -> SipResponse:
        interval = self.config.t1
        while True:
            self._send(data, target)
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(done), interval)
            interval = min(2 * interval, self.config.t2)

    def _bye_destination(self, call: Call) -> tuple[str, int]:
        """First route (loose routing) or the remote target; fall back to where the INVITE came
        from when the URI names a host we would have to resolve, or — unless a trusted proxy
        sent the INVITE — a host other than the one it came from (no BYEs at third parties)."""
        uri = header_uri(call.route_set[0]) if call.route_set else call.remote_target
        target = _uri_address(uri)
        if target is None or (not call.trusted_source and target[0] != call.peer[0]):
            return call.peer
        return target

    def _on_response(self, response: SipResponse) -> None:
        branch = header_params(response.require("Via")).get("branch", "")
        done = self._client.get(branch)
        if done is not None and not done.done() and response.status >= 200:
            done.set_result(response)
